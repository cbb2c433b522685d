import type { JWTPayload } from 'jose';

/**
 * Role names from a token claim named by a dot path (`groups`, `roles`, `realm_access.roles`). A
 * string claim is split on white space (so `scope` works too); an array keeps its string members;
 * anything else, or a missing claim, gives no roles.
 */
export function rolesFromClaim(payload: JWTPayload, path: string): Set<string> {
  let value: unknown = payload;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key)) return new Set();
    value = (value as Record<string, unknown>)[key];
  }
  const names = typeof value === 'string' ? value.split(/\s+/) : Array.isArray(value) ? value.filter((r): r is string => typeof r === 'string') : [];
  return new Set(names.filter((r) => r !== ''));
}
