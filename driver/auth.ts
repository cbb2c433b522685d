import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { AgentIdentity } from '../shared/agents/identity.ts';

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

/**
 * The identity of a fleet-wide token (`auth.tokens`): any agent id, zone and static account. It is
 * what the driver had before identities, kept for local use.
 */
export const FLEET_IDENTITY: AgentIdentity = { name: 'fleet', zones: ['*'], unzoned: true, agentIds: ['*'], staticAccounts: ['*'] };
