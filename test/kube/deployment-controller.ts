import { createHash } from 'node:crypto';
import { TEST_CONTEXT, type KubeApi } from './api.ts';
import { clone, isJsonObject, type JsonObject, type KubeObject } from './objects.ts';
import type { ResourceType } from './resource-types.ts';

/**
 * An opt-in stand-in for the deployment controller, for tests of rollouts: each pod template of a
 * Deployment gets its ReplicaSet (`<name>-<template hash>`, owner reference, `pod-template-hash`
 * label, `deployment.kubernetes.io/revision` annotation), the current one runs `spec.replicas`, the
 * others are scaled to 0, going back to an earlier template reuses its ReplicaSet under a new revision,
 * and the Deployment's status reports the rollout complete. No pods are made.
 */
const REVISION = 'deployment.kubernetes.io/revision';

function templateHash(template: unknown): string {
  const digest = createHash('sha256').update(JSON.stringify(template ?? {})).digest();
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < 10; i++) out += alphabet[(digest[i] ?? 0) % alphabet.length];
  return out;
}

function revisionOf(obj: KubeObject): number {
  return Number(obj.metadata.annotations?.[REVISION] ?? 0) || 0;
}

function spec(obj: KubeObject): JsonObject {
  return isJsonObject(obj.spec) ? obj.spec : {};
}

export function reconcileDeployment(api: KubeApi, deployments: ResourceType, replicaSets: ResourceType, namespace: string, name: string): void {
  const deployment = api.read(deployments, namespace, name);
  if (deployment === undefined || deployment.metadata.deletionTimestamp !== undefined) return;
  const uid = deployment.metadata.uid ?? '';
  const store = api.store;
  const owned = store.page(replicaSets, { namespace, atRv: store.resourceVersion }).items
    .map((r) => JSON.parse(r.json as string) as KubeObject)
    .filter((rs) => (rs.metadata.ownerReferences ?? []).some((o) => o.uid === uid));
  const template = spec(deployment).template;
  const hash = templateHash(template);
  const currentName = `${name}-${hash}`;
  const replicas = typeof spec(deployment).replicas === 'number' ? (spec(deployment).replicas as number) : 1;
  const maxRevision = owned.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
  const existing = owned.find((rs) => rs.metadata.name === currentName);
  const revision = existing !== undefined && revisionOf(existing) === maxRevision ? maxRevision : maxRevision + 1;

  const podTemplate = clone(isJsonObject(template) ? template : {});
  const templateMeta = isJsonObject(podTemplate.metadata) ? podTemplate.metadata : {};
  templateMeta.labels = { ...(isJsonObject(templateMeta.labels) ? templateMeta.labels : {}), 'pod-template-hash': hash };
  podTemplate.metadata = templateMeta;
  const selector = isJsonObject(spec(deployment).selector) ? clone(spec(deployment).selector as JsonObject) : {};
  selector.matchLabels = { ...(isJsonObject(selector.matchLabels) ? selector.matchLabels : {}), 'pod-template-hash': hash };
  const current: KubeObject = {
    apiVersion: 'apps/v1', kind: 'ReplicaSet',
    metadata: {
      ...(existing?.metadata ?? {}),
      name: currentName, namespace,
      labels: templateMeta.labels as Record<string, string>,
      annotations: { ...(existing?.metadata.annotations ?? {}), [REVISION]: String(revision), 'deployment.kubernetes.io/desired-replicas': String(replicas) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { replicas, selector, template: podTemplate },
    status: { replicas, fullyLabeledReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas, observedGeneration: existing?.metadata.generation ?? 1 },
  };
  api.upsert(replicaSets, current);
  for (const old of owned) {
    if (old.metadata.name === currentName || spec(old).replicas === 0) continue;
    api.upsert(replicaSets, { ...old, spec: { ...spec(old), replicas: 0 }, status: { replicas: 0, observedGeneration: old.metadata.generation ?? 1 } });
  }
  const now = api.now();
  const status: JsonObject = {
    observedGeneration: deployment.metadata.generation ?? 1,
    replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas,
    conditions: [
      { type: 'Available', status: 'True', lastUpdateTime: now, lastTransitionTime: now, reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' },
      { type: 'Progressing', status: 'True', lastUpdateTime: now, lastTransitionTime: now, reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${currentName}" has successfully progressed.` },
    ],
  };
  const previous = isJsonObject(deployment.status) ? deployment.status : {};
  const settledBefore = previous.observedGeneration === status.observedGeneration && previous.replicas === replicas
    && deployment.metadata.annotations?.[REVISION] === String(revision);
  if (settledBefore) return;
  api.upsert(deployments, {
    ...deployment,
    metadata: { ...deployment.metadata, annotations: { ...(deployment.metadata.annotations ?? {}), [REVISION]: String(revision) } },
    status,
  }, TEST_CONTEXT);
}
