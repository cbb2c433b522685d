import { apiGet, enc } from './api.ts';
import type { CallerJson } from './types.ts';

/**
 * What the signed-in caller may do, as the API decides it (`GET /vendor/caller`): the console shows a
 * control only when this says yes, and the API still refuses what it must.
 */
export function fetchCaller(accounts: readonly string[] = [], signal?: AbortSignal): Promise<CallerJson> {
  const query = accounts.length === 0 ? '' : `?accounts=${accounts.map(enc).join(',')}`;
  return apiGet<CallerJson>(`/vendor/caller${query}`, signal);
}

export function mayWrite(caller: CallerJson, account: string): boolean {
  return caller.accounts.some((a) => a.name === account && a.write);
}
