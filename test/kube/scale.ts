import { APPLY_PATCH, JSON_PATCH, type KubeApi, MERGE_PATCH, parseJsonBody, qualified, STRATEGIC_PATCH, type WriteContext } from './api.ts';
import { clone, getPath, isJsonObject, type JsonObject, type JsonValue, type KubeObject, setPath } from './objects.ts';
import { jsonPatch, mergePatch, strategicMergePatch } from './patch.ts';
import { parse as parseYaml } from 'yaml';
import type { ResourceType } from './resource-types.ts';
import { formatMatchLabels } from './selectors.ts';
import { badRequest, conflict, MODIFIED_CONFLICT, notFound, unsupportedMediaType } from './status.ts';

/**
 * The `scale` subresource: an `autoscaling/v1` Scale view of a workload's replica count. Reads build
 * it from the object; writes (PUT or any patch type) change only the replica count of the object.
 */
function scaleOf(rt: ResourceType, obj: KubeObject): JsonObject {
  const paths = rt.scale;
  if (paths === undefined) throw notFound(qualified(rt), obj.metadata.name ?? '');
  const replicas = getPath(obj, paths.specReplicasPath);
  const statusReplicas = getPath(obj, paths.statusReplicasPath);
  let selector = '';
  const matchLabels = getPath(obj, 'spec.selector.matchLabels');
  if (rt.crdName === undefined && isJsonObject(matchLabels)) selector = formatMatchLabels(matchLabels as Record<string, string>);
  else if (paths.labelSelectorPath !== undefined) {
    const s = getPath(obj, paths.labelSelectorPath);
    if (typeof s === 'string') selector = s;
  }
  const meta: JsonObject = { name: obj.metadata.name ?? '' };
  if (rt.namespaced) meta.namespace = obj.metadata.namespace ?? '';
  meta.uid = obj.metadata.uid ?? '';
  meta.resourceVersion = obj.metadata.resourceVersion ?? '';
  meta.creationTimestamp = obj.metadata.creationTimestamp ?? null;
  const status: JsonObject = { replicas: typeof statusReplicas === 'number' ? statusReplicas : 0 };
  if (selector !== '') status.selector = selector;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: meta,
    spec: { replicas: typeof replicas === 'number' ? replicas : 0 },
    status,
  };
}

function live(api: KubeApi, rt: ResourceType, namespace: string, name: string): KubeObject {
  const obj = api.read(rt, namespace, name);
  if (obj === undefined || rt.scale === undefined) throw notFound(qualified(rt), name);
  return obj;
}

export function getScale(api: KubeApi, rt: ResourceType, namespace: string, name: string): JsonObject {
  return scaleOf(rt, live(api, rt, namespace, name));
}

export function updateScale(api: KubeApi, rt: ResourceType, namespace: string, name: string, body: JsonValue, ctx: WriteContext): JsonObject {
  const obj = live(api, rt, namespace, name);
  if (!isJsonObject(body)) throw badRequest('the body of the request must be a Scale object');
  const meta = isJsonObject(body.metadata) ? body.metadata : {};
  if (typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' && meta.resourceVersion !== obj.metadata.resourceVersion) {
    throw conflict(qualified(rt), name, MODIFIED_CONFLICT);
  }
  const replicas = isJsonObject(body.spec) ? body.spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw badRequest(`Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`);
  }
  const next = clone(obj);
  setPath(next as unknown as JsonObject, rt.scale?.specReplicasPath ?? '.spec.replicas', replicas);
  const result = api.replaceWith(rt, obj, next, ctx, 'scale');
  return scaleOf(rt, result.object);
}

export function patchScale(api: KubeApi, rt: ResourceType, namespace: string, name: string, contentType: string, bodyText: string, ctx: WriteContext): JsonObject {
  const current = getScale(api, rt, namespace, name);
  let patched: JsonValue;
  if (contentType === MERGE_PATCH) patched = mergePatch(current, parseJsonBody(bodyText));
  else if (contentType === STRATEGIC_PATCH) patched = strategicMergePatch(current, parseJsonBody(bodyText));
  else if (contentType === JSON_PATCH) patched = jsonPatch(current, parseJsonBody(bodyText));
  else if (contentType === APPLY_PATCH) patched = mergePatch(current, parseYaml(bodyText) as JsonValue);
  else throw unsupportedMediaType(contentType, [JSON_PATCH, MERGE_PATCH, APPLY_PATCH, STRATEGIC_PATCH]);
  return updateScale(api, rt, namespace, name, patched, ctx);
}
