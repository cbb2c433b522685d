import { isJsonObject, type JsonValue } from './objects.ts';

/**
 * Merge keys of the built-in lists that strategic merge patch and server-side apply merge item by
 * item (the `patchMergeKey` of the Kubernetes types). Lists not named here are atomic: replaced whole.
 */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  imagePullSecrets: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  hostAliases: 'ip',
  conditions: 'type',
  ownerReferences: 'uid',
  topologySpreadConstraints: 'topologyKey',
};

/** The merge key of the list stored under `field`, judged by its items where one name has two meanings. */
export function mergeKeyFor(field: string, items: readonly JsonValue[]): string | undefined {
  if (field === 'ports') {
    const first = items.find(isJsonObject);
    if (first === undefined) return undefined;
    if ('containerPort' in first) return 'containerPort';
    if ('port' in first) return 'port';
    return undefined;
  }
  return MERGE_KEYS[field];
}
