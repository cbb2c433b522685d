/**
 * What every way of installing the agent must satisfy (plain manifests, their kustomize builds, the
 * Helm chart): the objects are valid and consistent, the vendor-agent.yml passes the agent's own
 * validator, and the Deployment agrees with it (ports, paths, token file, read-only filesystem).
 */
import { expect } from 'vitest';
import { DEFAULT_CONFIG_PATHS, parseConfig } from '../../agent/config/load.ts';
import type { AgentConfig } from '../../agent/config/schema.ts';
import { at, problems, type KubeObject } from './kube-objects.ts';

export type Container = {
  args: string[];
  env: { name: string; value?: string; valueFrom?: unknown }[];
  ports: { name: string; containerPort: number }[];
  volumeMounts: { name: string; mountPath: string }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  resources: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext: Record<string, unknown>;
};

export function one(objects: KubeObject[], kind: string): KubeObject {
  const found = objects.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0]!;
}

export function agentConfigOf(objects: KubeObject[]): { text: string; config: AgentConfig } {
  const text = (one(objects, 'ConfigMap').data as Record<string, string>)['vendor-agent.yml'];
  if (text === undefined) throw new Error('the ConfigMap has no key vendor-agent.yml');
  const result = parseConfig(text, 'vendor-agent.yml');
  expect(result.problems, 'problems the agent reports').toEqual([]);
  expect(result.warnings, 'warnings the agent reports').toEqual([]);
  return { text, config: result.config! };
}

/** The Deployment and the configuration it mounts agree with each other and with the agent's code. */
export function checkInstall(objects: KubeObject[], existingNamespaces: readonly string[] = []): void {
  expect(problems(objects, existingNamespaces)).toEqual([]);
  const deployment = one(objects, 'Deployment');
  const { config } = agentConfigOf(objects);
  const pod = at(deployment, 'spec.template.spec') as { volumes: { name: string; configMap?: { name: string }; secret?: { secretName: string }; emptyDir?: object }[]; securityContext: Record<string, unknown> };
  const container = (at(deployment, 'spec.template.spec.containers') as Container[])[0]!;
  const ports = new Map(container.ports.map((p) => [p.name, p.containerPort]));

  expect(at(deployment, 'spec.replicas')).toBe(2);
  expect(container.resources.requests?.cpu).toBeDefined();
  expect(container.resources.requests?.memory).toBeDefined();

  // The health server listens where kubelet probes reach it, on the probed port.
  expect(config.server.host).toBe('0.0.0.0');
  expect(ports.get(container.livenessProbe.httpGet.port)).toBe(config.server.port);
  expect(ports.get(container.readinessProbe.httpGet.port)).toBe(config.server.port);
  expect(container.livenessProbe.httpGet.path).toBe('/livez');
  expect(container.readinessProbe.httpGet.path).toBe('/readyz');
  expect(config.prometheus.enabled).toBe(true);
  expect(ports.get('metrics')).toBe(config.prometheus.port);
  expect(at(deployment, 'spec.template.metadata.annotations')).toMatchObject({ 'prometheus.io/port': String(config.prometheus.port) });

  // The file is where the agent looks by default and where the args point.
  const configPath = DEFAULT_CONFIG_PATHS[0];
  const mountOf = (volume: string) => container.volumeMounts.find((m) => m.name === volume)?.mountPath;
  const configVolume = pod.volumes.find((v) => v.configMap?.name === one(objects, 'ConfigMap').metadata.name);
  expect(`${mountOf(configVolume!.name)}/vendor-agent.yml`).toBe(configPath);
  expect(container.args).toEqual(['--config', configPath]);

  // The token comes from the Secret's mounted file, read by the token command.
  const secret = one(objects, 'Secret');
  const tokenVolume = pod.volumes.find((v) => v.secret?.secretName === secret.metadata.name);
  const tokenCommand = config.driver.auth?.tokenCommand;
  expect(tokenCommand?.format).toBe('raw');
  expect(tokenCommand?.args).toEqual([`${mountOf(tokenVolume!.name)}/token`]);
  expect(Object.keys((secret.stringData ?? secret.data) as object)).toEqual(['token']);

  // A read-only root filesystem, with the temporary folder on an emptyDir.
  expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
  expect(pod.volumes.find((v) => v.name === container.volumeMounts.find((m) => m.mountPath === '/tmp')?.name)?.emptyDir).toBeDefined();
}
