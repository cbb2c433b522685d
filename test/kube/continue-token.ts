import { badRequest } from './status.ts';

/**
 * List continuation tokens in the shape kube-apiserver uses (base64url JSON with `v`, `rv`, `start`),
 * plus the offset and total of the paged list so `remainingItemCount` costs nothing per page.
 * `rv: -1` continues at the latest revision, as the token in a 410 for a compacted continue does.
 */
export interface ContinueToken {
  rv: number;
  start: string;
  /** Items returned before this page. */
  offset?: number;
  /** Matching items in the whole list when it started. */
  total?: number;
}

export function encodeContinue(token: ContinueToken): string {
  const body: Record<string, unknown> = { v: 'meta.k8s.io/v1', rv: token.rv, start: token.start };
  if (token.offset !== undefined) body.n = token.offset;
  if (token.total !== undefined) body.t = token.total;
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

export function decodeContinue(text: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('invalid continue token: continue key is not valid: illegal base64 data');
  }
  const p = parsed as Record<string, unknown> | null;
  if (p === null || typeof p !== 'object' || p.v !== 'meta.k8s.io/v1') {
    throw badRequest('invalid continue token: continue key is not valid: server does not recognize this encoded key');
  }
  if (typeof p.rv !== 'number' || typeof p.start !== 'string' || p.rv === 0) {
    throw badRequest('invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  const token: ContinueToken = { rv: p.rv, start: p.start };
  if (typeof p.n === 'number') token.offset = p.n;
  if (typeof p.t === 'number') token.total = p.t;
  return token;
}
