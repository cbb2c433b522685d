/**
 * Agent identities and their tokens, as the management API serves them (docs/api.md, "Agent
 * identities"). A token is shown once, in the answer that issues it; afterwards only its id, times
 * and expiry are ever served.
 */
import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import type { Allowances } from '../../shared/agents/schema.ts';
import { identityNameSchema, allowancesSchema } from '../../shared/agents/schema.ts';
import { isTokenId, issueToken } from '../../shared/agents/tokens.ts';
import { parseOrThrow } from '../../shared/accounts/validate.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { VendorError } from '../../shared/errors.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import {
  deleteIdentity,
  deleteToken,
  getIdentity,
  listIdentities,
  listTokens,
  putIdentity,
  putToken,
  type StoredIdentity,
  type StoredToken,
} from '../../shared/table/agents/identities.ts';
import type { IdentityList, IdentityView, IssuedTokenView, RevokedTokenView, TokenList, TokenView } from '../../shared/answers/agent-identities.ts';

export interface IdentityDeps {
  table: TableRef;
  clock: Clock;
  /** Every change is logged with the caller's subject, the identity and token ids; never a token. */
  logger: Logger;
}

/** Longest lifetime a token may be given: ten years. */
export const MAX_TOKEN_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

/** The body of `POST .../tokens`: optional, and with it only an optional lifetime. */
export const tokenRequestSchema = v.strictObject({
  expiresInSeconds: v.optional(
    v.pipe(
      v.number('must be a number of seconds'),
      v.integer('must be an integer'),
      v.minValue(60, 'must be at least 60'),
      v.maxValue(MAX_TOKEN_LIFETIME_SECONDS, `must be at most ${MAX_TOKEN_LIFETIME_SECONDS}`),
    ),
  ),
});

const iso = (ms: number) => new Date(ms).toISOString();

function identityView(i: StoredIdentity): IdentityView {
  return { name: i.name, zones: i.zones, unzoned: i.unzoned, agentIds: i.agentIds, staticAccounts: i.staticAccounts, createdAt: iso(i.createdAt), updatedAt: iso(i.updatedAt) };
}

function tokenView(t: StoredToken, now: number): TokenView {
  return {
    tokenId: t.tokenId,
    createdAt: iso(t.createdAt),
    ...(t.notAfter === undefined ? {} : { expiresAt: iso(t.notAfter) }),
    expired: t.notAfter !== undefined && t.notAfter <= now,
  };
}

/** The path's identity name, or `invalid_input` naming what is wrong (never echoing more than the limit allows). */
export function identityName(raw: string): string {
  return parseOrThrow(identityNameSchema, raw, 'the identity name', 'name');
}

function notFound(name: string): VendorError {
  return new VendorError('not_found', `no agent identity named "${name}"`);
}

export function parseAllowances(body: unknown): Allowances {
  return parseOrThrow(allowancesSchema, body, 'the request body');
}

export async function listIdentityViews(deps: IdentityDeps): Promise<IdentityList> {
  return { items: (await listIdentities(deps.table)).map(identityView) };
}

export async function getIdentityView(deps: IdentityDeps, name: string): Promise<IdentityView> {
  const found = await getIdentity(deps.table, name);
  if (found === undefined) throw notFound(name);
  return identityView(found);
}

/** Creates the identity or replaces its allowances; `created` tells which. */
export async function putIdentityView(deps: IdentityDeps, name: string, allowances: Allowances): Promise<{ created: boolean; view: IdentityView }> {
  const incarnation = randomUUID();
  const stored = await putIdentity(deps.table, name, allowances, deps.clock.now(), incarnation);
  // An identity that existed keeps its incarnation: the one drawn here is kept only by a creation.
  return { created: stored.incarnation === incarnation, view: identityView(stored) };
}

export async function deleteIdentityView(deps: IdentityDeps, name: string): Promise<IdentityView> {
  const gone = await deleteIdentity(deps.table, name);
  if (gone === undefined) throw notFound(name);
  return identityView(gone);
}

export async function issueIdentityToken(
  deps: IdentityDeps,
  name: string,
  request: v.InferOutput<typeof tokenRequestSchema>,
): Promise<IssuedTokenView> {
  const identity = await getIdentity(deps.table, name);
  if (identity === undefined) throw notFound(name);
  const now = deps.clock.now();
  for (;;) {
    const issued = issueToken();
    const stored: StoredToken = {
      tokenId: issued.tokenId,
      identity: name,
      incarnation: identity.incarnation,
      digest: issued.digest,
      createdAt: now,
      ...(request.expiresInSeconds === undefined ? {} : { notAfter: now + request.expiresInSeconds * 1000 }),
    };
    // A token id drawn twice is drawn again rather than replacing the other token.
    if (await putToken(deps.table, stored)) return { identity: name, ...tokenView(stored, now), token: issued.token };
  }
}

export async function listIdentityTokens(deps: IdentityDeps, name: string): Promise<TokenList> {
  if ((await getIdentity(deps.table, name)) === undefined) throw notFound(name);
  const now = deps.clock.now();
  return { items: (await listTokens(deps.table, name)).map((t) => tokenView(t, now)) };
}

export async function revokeIdentityToken(deps: IdentityDeps, name: string, tokenId: string): Promise<RevokedTokenView> {
  if (!isTokenId(tokenId) || !(await deleteToken(deps.table, name, tokenId))) {
    throw new VendorError('not_found', `agent identity "${name}" has no token with that id`);
  }
  return { identity: name, tokenId };
}
