import { readFile } from 'node:fs/promises';
import type { KubeConfig, V1OwnerReference } from '@kubernetes/client-node';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';

/** Environment variables the manifests set (the downward API gives the namespace and pod name). */
export const ZONE_ENV = {
  deploymentName: 'VENDOR_DEPLOYMENT_NAME',
  namespace: 'POD_NAMESPACE',
  podName: 'POD_NAME',
} as const;

export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export type ZoneSource = 'environment' | 'pod owners' | 'host name';

export interface Zone {
  /** `<deploymentName>_<namespace>`, or the host name when those cannot be known. */
  zoneId: string;
  source: ZoneSource;
}

export interface ZoneDeps {
  env: NodeJS.ProcessEnv;
  hostname: string;
  logger: Logger;
  clock: Clock;
  /** The cluster the agent runs in, or undefined outside a cluster. Default: the in-cluster service account. */
  inCluster?: () => Promise<KubeConfig | undefined>;
  namespaceFile?: string;
  /** How long the owner look-up may take before the host name is used. */
  timeoutMs?: number;
}

export function zoneId(deploymentName: string, namespace: string): string {
  return `${deploymentName}_${namespace}`;
}

/** The in-cluster service account, when the agent runs in a pod. */
export async function inClusterConfig(env: NodeJS.ProcessEnv = process.env): Promise<KubeConfig | undefined> {
  if (!env['KUBERNETES_SERVICE_HOST']) return undefined;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromCluster();
  return kc;
}

function controllerOf(owners: V1OwnerReference[] | undefined): V1OwnerReference | undefined {
  return owners?.find((o) => o.controller === true);
}

/**
 * Follows pod -> ReplicaSet -> Deployment through the owner references (needs get on pods and on
 * apps replicasets in the agent's namespace). A pod owned by another controller (a StatefulSet, say)
 * is zoned by that controller's name.
 */
async function deploymentOfPod(kc: KubeConfig, namespace: string, podName: string): Promise<string> {
  const { AppsV1Api, CoreV1Api } = await import('@kubernetes/client-node');
  const pod = await kc.makeApiClient(CoreV1Api).readNamespacedPod({ name: podName, namespace });
  const owner = controllerOf(pod.metadata?.ownerReferences);
  if (owner === undefined) throw new Error(`pod ${namespace}/${podName} has no controller`);
  if (owner.kind !== 'ReplicaSet') return owner.name;
  const replicaSet = await kc.makeApiClient(AppsV1Api).readNamespacedReplicaSet({ name: owner.name, namespace });
  return controllerOf(replicaSet.metadata?.ownerReferences)?.name ?? owner.name;
}

async function readNamespace(deps: ZoneDeps): Promise<string | undefined> {
  const fromEnv = deps.env[ZONE_ENV.namespace];
  if (fromEnv) return fromEnv;
  try {
    return (await readFile(deps.namespaceFile ?? SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8')).trim() || undefined;
  } catch {
    return undefined;
  }
}

function reasonOf(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  if (code === 403) return 'forbidden: the service account needs get on pods and on apps replicasets in its namespace';
  if (typeof code === 'number') return `the API server answered ${code}`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * The zone of this agent (`<deploymentName>_<namespace>`, docs/agent-config.md#zone-id): from the manifest's environment
 * variables, else from the pod's owners through the API, else the host name. Logs which it used.
 */
export async function resolveZone(deps: ZoneDeps): Promise<Zone> {
  const { env, logger } = deps;
  const deploymentName = env[ZONE_ENV.deploymentName];
  const namespace = await readNamespace(deps);
  if (deploymentName && namespace) {
    const zone: Zone = { zoneId: zoneId(deploymentName, namespace), source: 'environment' };
    logger.info({ ...zone, variables: [ZONE_ENV.deploymentName, ZONE_ENV.namespace] }, 'zone id from the environment');
    return zone;
  }
  let reason = 'not running in a Kubernetes cluster';
  const kc = await (deps.inCluster ?? (() => inClusterConfig(env)))();
  if (kc !== undefined && namespace === undefined) reason = `the namespace is unknown (set ${ZONE_ENV.namespace})`;
  if (kc !== undefined && namespace !== undefined) {
    const podName = env[ZONE_ENV.podName] || deps.hostname;
    const timeout = new AbortController();
    try {
      const owner = await Promise.race([
        deploymentOfPod(kc, namespace, podName),
        deps.clock.sleep(deps.timeoutMs ?? 10_000, timeout.signal).then(() => {
          throw new Error('the API server did not answer in time');
        }),
      ]);
      const zone: Zone = { zoneId: zoneId(owner, namespace), source: 'pod owners' };
      logger.info({ ...zone, pod: podName }, 'zone id from the owners of the pod');
      return zone;
    } catch (e) {
      reason = `looking up the owners of pod ${namespace}/${podName} failed: ${reasonOf(e)}`;
    } finally {
      timeout.abort();
    }
  }
  const zone: Zone = { zoneId: deps.hostname, source: 'host name' };
  logger.warn({ ...zone, reason }, `zone id is the host name; set ${ZONE_ENV.deploymentName} and ${ZONE_ENV.namespace} to choose it`);
  return zone;
}
