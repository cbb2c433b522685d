import { createHash, timingSafeEqual } from 'node:crypto';
import type { Metadata, ServerDuplexStream } from '@grpc/grpc-js';
import { VendorError } from '../shared/errors.ts';
import type { AgentIdentity } from '../shared/agents/identity.ts';
import { AUTHORIZATION_HEADER, bearerToken } from '../shared/protocol/wire.ts';

/**
 * Checks the bearer token of a call and names the identity it speaks for; throws `unauthenticated`
 * when it is missing or not accepted.
 */
export type TokenCheck = (metadata: Metadata) => AgentIdentity;

/**
 * What a stream was let in with, so its credential can be checked again while the stream lasts
 * (driver/credential-watch.ts). Token ids and identity names are not secret; tokens never appear here.
 */
export interface Credential {
  kind: 'fleet-token' | 'file-token' | 'issued-token' | 'certificate' | 'external';
  /** The id of an issued token (`vat_<tokenId>_...`). */
  tokenId?: string;
  /** The incarnation of the table's identity item it was accepted for; absent for identities of the file. */
  incarnation?: string;
  /** When it stops being accepted (ms): a token's expiry, a certificate's notAfter. */
  notAfter?: number;
}

export interface Authenticated {
  identity: AgentIdentity;
  credential: Credential;
}

/**
 * Names the identity a new agent stream's credential speaks for (its metadata, its client
 * certificate), with the credential when it may need checking again; rejects with `unauthenticated`
 * (or another VendorError) when it is not accepted.
 */
export type AgentAuthenticator = (call: ServerDuplexStream<unknown, unknown>) => Promise<AgentIdentity | Authenticated>;

export function authenticated(result: AgentIdentity | Authenticated): Authenticated {
  return 'credential' in result ? result : { identity: result, credential: { kind: 'external' } };
}

/** An authenticator from a check of the call's metadata alone. */
export function tokenAuthenticator(check: TokenCheck): AgentAuthenticator {
  return async (call) => check(call.metadata);
}

/**
 * The identity of a fleet-wide token (`auth.tokens`): any agent id, zone and static account. It is
 * what the driver had before identities, kept for local use.
 */
export const FLEET_IDENTITY: AgentIdentity = { name: 'fleet', zones: ['*'], unzoned: true, agentIds: ['*'], staticAccounts: ['*'] };

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * Accepts any of `tokens` as the fleet identity, for tests and embedders that pass their own
 * authenticator; the driver's own is `createAgentAuthenticator` (driver/credentials.ts).
 * Accepts any of `tokens` (several are valid at once while one is rotated out). Tokens are compared
 * as SHA-256 digests with `timingSafeEqual`, and every configured token is compared on every call,
 * so neither a token's length nor which one matched shows in the time taken. With no tokens
 * configured (client certificates authenticate agents instead) every call passes.
 */
export function bearerTokenCheck(tokens: readonly string[]): TokenCheck {
  const accepted = tokens.map(digest);
  return (metadata) => {
    if (accepted.length === 0) return FLEET_IDENTITY;
    const header = metadata.get(AUTHORIZATION_HEADER)[0];
    if (typeof header !== 'string') throw new VendorError('unauthenticated', 'missing bearer token');
    const token = bearerToken(header);
    if (token === undefined) throw new VendorError('unauthenticated', 'authorization is not a bearer token');
    const presented = digest(token);
    let match = false;
    for (const candidate of accepted) match = timingSafeEqual(candidate, presented) || match;
    if (!match) throw new VendorError('unauthenticated', 'bearer token not accepted');
    return FLEET_IDENTITY;
  };
}
