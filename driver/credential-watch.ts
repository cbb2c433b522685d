/**
 * Ends open agent streams whose credential no longer holds (docs/protocol.md, "Authentication"):
 * every `auth.recheckIntervalMs` each replica reads the identities and tokens of the table (the truth
 * across replicas) and ends, on its own streams, those of a revoked token or a deleted identity, an
 * expired token or certificate (UNAUTHENTICATED), and those of an identity whose allowances changed
 * (UNAVAILABLE, so the agent reconnects under the new allowances at once).
 */
import type { AgentIdentity } from '../shared/agents/identity.ts';
import { identityOf, sameAllowances } from '../shared/agents/schema.ts';
import type { Clock } from '../shared/clock.ts';
import { VendorError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { listIdentities, listTokens, tokenLive, type StoredIdentity, type StoredToken } from '../shared/table/agents/identities.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import type { Waker } from '../shared/waker.ts';
import type { Credential } from './auth.ts';

export interface WatchedStream {
  identity: AgentIdentity;
  credential: Credential;
  /** For the log line: ids, never a credential. */
  sessionId: string;
  agentId: string;
  end(error: VendorError): void;
}

/** Why a stream's credential no longer holds at `now`, or undefined while it does. */
export function credentialVerdict(
  stream: Pick<WatchedStream, 'identity' | 'credential'>,
  now: number,
  stored: { identities: ReadonlyMap<string, StoredIdentity>; tokens: ReadonlyMap<string, StoredToken> } | undefined,
): VendorError | undefined {
  const { credential, identity } = stream;
  if (credential.notAfter !== undefined && credential.notAfter <= now) {
    return new VendorError('unauthenticated', credential.kind === 'certificate' ? 'the client certificate has expired' : 'the agent token has expired');
  }
  // Identities of the file (and fleet tokens) change only with the file, read at start.
  if (credential.incarnation === undefined || stored === undefined) return undefined;
  const current = stored.identities.get(identity.name);
  if (credential.kind === 'issued-token') {
    const token = credential.tokenId === undefined ? undefined : stored.tokens.get(credential.tokenId);
    if (token === undefined || !tokenLive(token, current, now) || token.incarnation !== credential.incarnation) {
      return new VendorError('unauthenticated', 'the agent token was revoked');
    }
  }
  if (current === undefined || current.incarnation !== credential.incarnation) return new VendorError('unauthenticated', 'the agent identity was deleted');
  if (!sameAllowances(identityOf(current.name, current), identity)) {
    return new VendorError('unavailable', "the agent identity's allowances changed; reconnect");
  }
  return undefined;
}

export interface CredentialWatchDeps {
  table: TableRef;
  clock: Clock;
  log: Logger;
  intervalMs: number;
  streams(): Iterable<WatchedStream>;
}

/** One pass: reads the table only when some stream's identity is kept there. */
export async function recheckCredentials(deps: Omit<CredentialWatchDeps, 'intervalMs'>): Promise<void> {
  const streams = [...deps.streams()];
  let stored: Parameters<typeof credentialVerdict>[2];
  if (streams.some((s) => s.credential.incarnation !== undefined)) {
    try {
      const [identities, tokens] = await Promise.all([listIdentities(deps.table), listTokens(deps.table)]);
      stored = { identities: new Map(identities.map((i) => [i.name, i])), tokens: new Map(tokens.map((t) => [t.tokenId, t])) };
    } catch (e) {
      // An outage of the table does not cut agents off; revocations apply once it answers again.
      deps.log.warn({ err: e instanceof Error ? e.message : e }, 'agent credentials could not be checked against the table; trying again');
    }
  }
  const now = deps.clock.now();
  for (const stream of streams) {
    const verdict = credentialVerdict(stream, now, stored);
    if (verdict === undefined) continue;
    deps.log.warn(
      { identity: stream.identity.name, credential: stream.credential.kind, tokenId: stream.credential.tokenId, sessionId: stream.sessionId, agentId: stream.agentId },
      `agent stream of identity ${stream.identity.name} ended: ${verdict.message}`,
    );
    stream.end(verdict);
  }
}

/** Whether a stream's credential can stop holding while it is open (expiry, or an identity of the table). */
export function needsRecheck(credential: Credential): boolean {
  return credential.notAfter !== undefined || credential.incarnation !== undefined;
}

/**
 * Runs `recheckCredentials` every `intervalMs` until the signal aborts. While no stream has a
 * credential that can stop holding it waits, without a timer, for `waker` (woken when one opens).
 */
export async function watchCredentials(deps: CredentialWatchDeps & { waker: Waker }, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const watching = [...deps.streams()].some((s) => needsRecheck(s.credential));
    await deps.waker.wait(deps.clock, watching ? deps.intervalMs : Number.POSITIVE_INFINITY, signal);
    if (signal.aborted || !watching) continue;
    try {
      await recheckCredentials(deps);
    } catch (e) {
      deps.log.error({ err: e }, 'checking agent credentials failed');
    }
  }
}
