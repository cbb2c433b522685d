/**
 * What an agent identity lets a hello claim (docs/protocol.md, "Agent identities"): the zone, the
 * agent id and the names of its static accounts must each be allowed by the identity the stream's
 * credential speaks for. Checked before anything of the hello is recorded (pure: no I/O). Whether
 * the agent id is still bound to another identity needs the table: driver/session-store.ts.
 */
import { matchesAny, type AgentIdentity } from '../shared/agents/identity.ts';
import { VendorError } from '../shared/errors.ts';
import type { Hello__Output } from '../shared/protocol/messages.ts';

export type HelloRefusal =
  | { claim: 'zone'; message: string }
  | { claim: 'agentId'; message: string }
  | { claim: 'staticAccounts'; message: string; names: string[] };

const quoted = (s: string): string => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);

/** The first claim of `hello` that `identity` does not allow, or undefined when it allows them all. */
export function helloRefusal(identity: AgentIdentity, hello: Pick<Hello__Output, 'agentId' | 'zone' | 'staticAccounts'>): HelloRefusal | undefined {
  if (!matchesAny(hello.zone, identity.zones)) {
    return { claim: 'zone', message: `identity ${identity.name} may not serve zone ${quoted(hello.zone)}` };
  }
  if (!matchesAny(hello.agentId, identity.agentIds)) {
    return { claim: 'agentId', message: `identity ${identity.name} may not use agent id ${quoted(hello.agentId)}` };
  }
  const names = [...new Set(hello.staticAccounts.map((a) => a.name))].filter((n) => !matchesAny(n, identity.staticAccounts));
  if (names.length > 0) {
    const shown = names.slice(0, 10).map(quoted).join(', ');
    return {
      claim: 'staticAccounts',
      message: `identity ${identity.name} may not define static account${names.length === 1 ? '' : 's'} ${shown}${names.length > 10 ? ` and ${names.length - 10} more` : ''}`,
      names,
    };
  }
  return undefined;
}

/** The error a refused hello ends its stream with (`PERMISSION_DENIED`). */
export function helloRefused(message: string, claim: HelloRefusal['claim'] | 'bound', boundTo?: string): VendorError {
  // `boundTo` (the identity holding the agent id) is for the log only; the status carries the message.
  return new VendorError('forbidden', `hello refused: ${message}`, { details: { refused: claim, ...(boundTo === undefined ? {} : { boundTo }) } });
}
