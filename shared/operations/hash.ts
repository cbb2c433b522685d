import { createHash } from 'node:crypto';

/** JSON with object keys in sorted order, so equal values give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What makes two operation requests the same: the account and the validated request, so the same
 * manifests sent once as YAML and once as JSON, or with keys in another order, are one request.
 */
export function requestHash(account: string, request: unknown): string {
  return createHash('sha256').update(canonicalJson({ account, request })).digest('hex');
}
