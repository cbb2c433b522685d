/**
 * The driver's authentication of agent streams (docs/protocol.md, "Authentication"): a client
 * certificate naming an identity, a token issued for an identity (kept in the table), a token of an
 * identity of `auth.identities`, or a fleet-wide token of `auth.tokens`. Each names the identity the
 * stream speaks for, never the agent's own hello.
 */
import { timingSafeEqual } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import * as v from 'valibot';
import type { AgentIdentity } from '../shared/agents/identity.ts';
import { identityNameSchema, identityOf } from '../shared/agents/schema.ts';
import { issuedTokenId, sameDigest, tokenDigest } from '../shared/agents/tokens.ts';
import type { Clock } from '../shared/clock.ts';
import { VendorError, isVendorError } from '../shared/errors.ts';
import { AUTHORIZATION_HEADER, bearerToken } from '../shared/protocol/wire.ts';
import { getIdentity, getToken, tokenLive } from '../shared/table/agents/identities.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { FLEET_IDENTITY, type AgentAuthenticator, type Authenticated } from './auth.ts';
import { entryDigest, type DriverGrpcConfig } from './config.ts';

/** The URI SAN that names a certificate's identity: `urn:vendor-agent:identity:<name>`. */
export const IDENTITY_URI_PREFIX = 'urn:vendor-agent:identity:';

/** The same answer for every token that is not accepted, so a caller learns nothing about why. */
const NOT_ACCEPTED = 'bearer token not accepted';

/**
 * The identity name a verified client certificate carries: its one `URI:urn:vendor-agent:identity:<name>`
 * subject alternative name, else (only when `commonName` is set) its subject CN. Undefined when it
 * names none; `invalid` when it names more than one or a name that cannot be an identity's.
 */
export function certificateIdentityName(cert: Pick<PeerCertificate, 'subjectaltname' | 'subject'>, commonName: boolean): string | undefined | { invalid: string } {
  // Node writes the names comma-separated, quoting (JSON) those with unusual characters.
  const names = (cert.subjectaltname ?? '').split(', ').map((entry) => {
    const colon = entry.indexOf(':');
    const value = entry.slice(colon + 1);
    return { type: entry.slice(0, colon), value: value.startsWith('"') ? safeJson(value) : value };
  });
  const uris = names.filter((n) => n.type === 'URI' && n.value.startsWith(IDENTITY_URI_PREFIX)).map((n) => n.value.slice(IDENTITY_URI_PREFIX.length));
  if (uris.length > 1) return { invalid: 'the client certificate names more than one agent identity' };
  const cn = cert.subject?.CN;
  const name = uris[0] ?? (commonName ? (Array.isArray(cn) ? (cn.length === 1 ? cn[0] : undefined) : cn) : undefined);
  if (name === undefined) return undefined;
  return v.is(identityNameSchema, name) ? name : { invalid: 'the client certificate names no valid agent identity' };
}

function safeJson(text: string): string {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'string' ? parsed : '';
  } catch {
    return '';
  }
}

export interface AuthenticatorDeps {
  table: TableRef;
  clock: Clock;
  config: DriverGrpcConfig;
}

/**
 * The authenticator of a driver. With `grpc.tls.clientCaFile` set, a verified client certificate
 * that names an identity decides (a bearer token beside it is not read); one naming an identity
 * neither the file nor the table knows is refused. Otherwise the bearer token decides: an issued
 * token (`vat_...`) is one strongly consistent read of its item and one of its identity; any other
 * token is compared, in constant time and against every entry, with the file's tokens.
 */
export function createAgentAuthenticator(deps: AuthenticatorDeps): AgentAuthenticator {
  const { table, clock, config } = deps;
  const fileIdentities = new Map<string, AgentIdentity>(config.auth.identities.map((i) => [i.name, identityOf(i.name, i)]));
  const fileTokens = [
    ...config.auth.tokens.map((t) => ({ digest: Buffer.from(entryDigest(t), 'hex'), identity: FLEET_IDENTITY, kind: 'fleet-token' as const })),
    ...config.auth.identities.flatMap((i) =>
      i.tokens.map((t) => ({ digest: Buffer.from(entryDigest(t), 'hex'), identity: fileIdentities.get(i.name) as AgentIdentity, kind: 'file-token' as const })),
    ),
  ];
  const mtls = config.grpc.tls?.clientCaFile !== undefined;

  const byCertificate = async (cert: PeerCertificate): Promise<Authenticated | undefined> => {
    const named = certificateIdentityName(cert, config.auth.certificateCommonName);
    if (named === undefined) return undefined;
    if (typeof named !== 'string') throw new VendorError('unauthenticated', named.invalid);
    const notAfter = Date.parse(cert.valid_to);
    const expiry = Number.isFinite(notAfter) ? { notAfter } : {};
    const fromFile = fileIdentities.get(named);
    if (fromFile !== undefined) return { identity: fromFile, credential: { kind: 'certificate', ...expiry } };
    const stored = await getIdentity(table, named);
    if (stored === undefined) throw new VendorError('unauthenticated', 'the client certificate names an unknown agent identity');
    return { identity: identityOf(stored.name, stored), credential: { kind: 'certificate', incarnation: stored.incarnation, ...expiry } };
  };

  const byIssuedToken = async (token: string, tokenId: string): Promise<Authenticated> => {
    const stored = await getToken(table, tokenId);
    if (stored === undefined || !sameDigest(stored.digest, tokenDigest(token))) throw new VendorError('unauthenticated', NOT_ACCEPTED);
    const identity = await getIdentity(table, stored.identity);
    if (!tokenLive(stored, identity, clock.now())) throw new VendorError('unauthenticated', NOT_ACCEPTED);
    return {
      identity: identityOf(identity.name, identity),
      credential: { kind: 'issued-token', tokenId, incarnation: identity.incarnation, ...(stored.notAfter === undefined ? {} : { notAfter: stored.notAfter }) },
    };
  };

  const byFileToken = (token: string): Authenticated => {
    const presented = Buffer.from(tokenDigest(token), 'hex');
    let found: (typeof fileTokens)[number] | undefined;
    // Every entry is compared, so the time taken does not tell which one matched.
    for (const entry of fileTokens) if (timingSafeEqual(entry.digest, presented) && found === undefined) found = entry;
    if (found === undefined) throw new VendorError('unauthenticated', NOT_ACCEPTED);
    return { identity: found.identity, credential: { kind: found.kind } };
  };

  return async (call) => {
    try {
      if (mtls) {
        const cert = call.getAuthContext().sslPeerCertificate;
        const byCert = cert === undefined ? undefined : await byCertificate(cert);
        if (byCert !== undefined) return byCert;
      }
      const header = call.metadata.get(AUTHORIZATION_HEADER)[0];
      if (typeof header !== 'string') {
        throw new VendorError('unauthenticated', mtls ? 'the client certificate names no agent identity and no bearer token was sent' : 'missing bearer token');
      }
      const token = bearerToken(header);
      if (token === undefined) throw new VendorError('unauthenticated', 'authorization is not a bearer token');
      const tokenId = issuedTokenId(token);
      return tokenId === undefined ? byFileToken(token) : await byIssuedToken(token, tokenId);
    } catch (e) {
      if (isVendorError(e)) throw e;
      // The table did not answer: the agent tries again later; nothing of the failure goes to it.
      throw new VendorError('unavailable', 'the credential cannot be checked now; try again', { cause: e });
    }
  };
}
