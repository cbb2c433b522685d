/**
 * How the caching roles of one pool of accounts (a zone's, or those pinned to no zone) are spread
 * over the live agents that hold them (pure: no I/O). With M roles and N agents every agent caches
 * floor(M/N) or ceil(M/N) of them once settled (docs/protocol.md#6a-assignment, The caching spread).
 *
 * The agents left with ceil(M/N) are those caching the most already, so the moves are as few as any
 * even spread allows: only agents above their share give roles up, only agents below it take them,
 * and a role moves at most once. Every replica plans the same from the same view; each carries out
 * only the moves towards its own agents, each as a write conditional on the role still being where
 * the plan found it, so a view that lags costs a refused write, never a role moved twice.
 */

export interface SpreadMove {
  account: string;
  from: string;
  to: string;
}

export interface SpreadInput {
  /** Each account of the pool and the agent caching it (undefined: none yet). */
  roles: ReadonlyMap<string, string | undefined>;
  /** The live agents that hold the pool's accounts. */
  agents: Iterable<string>;
  /** Whether `agent` may take the role of `account` now (it confirmed the account's current generation). */
  canTake?: (account: string, agent: string) => boolean;
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * How many roles each agent should cache: floor(M/N) each, and one more for the M mod N agents
 * caching the most now (ties by agent id, so every replica agrees).
 */
export function spreadTargets(counts: ReadonlyMap<string, number>, total: number): Map<string, number> {
  const agents = [...counts.keys()].sort((a, b) => (counts.get(b) ?? 0) - (counts.get(a) ?? 0) || byId(a, b));
  const floor = agents.length === 0 ? 0 : Math.floor(total / agents.length);
  const extra = agents.length === 0 ? 0 : total % agents.length;
  return new Map(agents.map((a, i) => [a, floor + (i < extra ? 1 : 0)] as const));
}

/** Roles per agent, every agent of `agents` counted (0 when it caches nothing). */
export function roleCounts(roles: ReadonlyMap<string, string | undefined>, agents: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const a of agents) counts.set(a, 0);
  for (const holder of roles.values()) if (holder !== undefined && counts.has(holder)) counts.set(holder, (counts.get(holder) ?? 0) + 1);
  return counts;
}

/**
 * The moves that bring the pool to an even spread; undefined while a role has no live holder (a
 * takeover is still to come, and the spread waits for it rather than planning around it).
 */
export function planSpread(input: SpreadInput): SpreadMove[] | undefined {
  const counts = roleCounts(input.roles, input.agents);
  if (counts.size === 0) return [];
  const held = new Map<string, string[]>();
  for (const [account, holder] of input.roles) {
    if (holder === undefined || !counts.has(holder)) return undefined;
    let list = held.get(holder);
    if (list === undefined) held.set(holder, (list = []));
    list.push(account);
  }
  const targets = spreadTargets(counts, input.roles.size);
  const deficit = new Map<string, number>();
  for (const [agent, target] of targets) {
    const short = target - (counts.get(agent) ?? 0);
    if (short > 0) deficit.set(agent, short);
  }
  const receivers = [...deficit.keys()].sort((a, b) => (counts.get(a) ?? 0) - (counts.get(b) ?? 0) || byId(a, b));
  const canTake = input.canTake ?? (() => true);
  const moves: SpreadMove[] = [];
  for (const [giver, target] of targets) {
    let surplus = (counts.get(giver) ?? 0) - target;
    if (surplus <= 0) continue;
    for (const account of (held.get(giver) ?? []).sort(byId)) {
      if (surplus === 0) break;
      const to = receivers.find((r) => (deficit.get(r) ?? 0) > 0 && canTake(account, r));
      if (to === undefined) continue;
      deficit.set(to, (deficit.get(to) ?? 0) - 1);
      surplus--;
      moves.push({ account, from: giver, to });
    }
  }
  return moves;
}

/** Whether the pool is spread evenly: every agent caches floor(M/N) or ceil(M/N) roles. */
export function spreadIsEven(roles: ReadonlyMap<string, string | undefined>, agents: Iterable<string>): boolean {
  const counts = [...roleCounts(roles, agents).values()];
  if (counts.length === 0) return true;
  const total = counts.reduce((a, b) => a + b, 0);
  if (total !== roles.size) return false;
  return Math.max(...counts) <= Math.ceil(total / counts.length) && Math.min(...counts) >= Math.floor(total / counts.length);
}
