/**
 * An agent identity: who a credential the driver accepts speaks for, and what its agents may say and
 * receive (docs/security.md, "Agent identities"). The driver takes the identity from the credential
 * (a bearer token issued for it, or the client certificate), never from the agent's own hello.
 */
export interface AgentIdentity {
  /** The identity's name, unique in the fleet; logs and session items carry it. */
  readonly name: string;
  /** Zones (`<deploymentName>_<namespace>`) its agents may serve: names or `*` patterns. */
  readonly zones: readonly string[];
  /** Whether its agents may be sent accounts that are pinned to no zone. */
  readonly unzoned: boolean;
  /** Agent ids its agents may use: names or `*` patterns. */
  readonly agentIds: readonly string[];
  /** Names of static accounts its agents may define, driver-defined names included: names or `*` patterns. */
  readonly staticAccounts: readonly string[];
}

/**
 * Whether `value` matches one of `patterns`: an exact name, or a pattern where `*` stands for any
 * run of characters (none included). No other character is special.
 */
export function matchesAny(value: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.includes('*') ? globRegExp(p).test(value) : p === value));
}

const compiled = new Map<string, RegExp>();

function globRegExp(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (re === undefined) {
    const body = pattern
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
      .join('.*');
    re = new RegExp(`^${body}$`, 's');
    if (compiled.size > 1024) compiled.clear();
    compiled.set(pattern, re);
  }
  return re;
}
