import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AccountRecord, AgentResult } from '../../shared/accounts/model.ts';
import { planAccount, type Presence } from './plan.ts';
import { planSpread, roleCounts, spreadIsEven, spreadTargets, type SpreadMove } from './spread.ts';

const roles = (m: Record<string, string | undefined>) => new Map(Object.entries(m));

/** The fewest moves any even spread needs from these counts: each agent sheds down to floor(M/N), except M mod N of those above it, which keep one more. */
function fewestMoves(counts: number[], total: number): number {
  const floor = Math.floor(total / counts.length);
  const extra = total % counts.length;
  const above = counts.filter((c) => c > floor);
  return above.reduce((sum, c) => sum + c - floor, 0) - Math.min(extra, above.length);
}

describe('planSpread', () => {
  it('moves roles from the agent caching them all to the ones that joined, as few as an even spread needs', () => {
    const r = roles({ a: 'x', b: 'x', c: 'x', d: 'x', e: 'x', f: 'x', g: 'x' });
    const moves = planSpread({ roles: r, agents: ['x', 'y', 'z'] }) as SpreadMove[];
    expect(moves).toHaveLength(4);
    expect(moves.every((m) => m.from === 'x')).toBe(true);
    expect(moves.filter((m) => m.to === 'y')).toHaveLength(2);
    expect(moves.filter((m) => m.to === 'z')).toHaveLength(2);
  });

  it('moves nothing when every agent caches floor(M/N) or ceil(M/N)', () => {
    expect(planSpread({ roles: roles({ a: 'x', b: 'x', c: 'y' }), agents: ['x', 'y'] })).toEqual([]);
    expect(planSpread({ roles: roles({ a: 'x', b: 'x', c: 'y' }), agents: ['x', 'y', 'z'] })).toEqual([{ account: 'a', from: 'x', to: 'z' }]);
  });

  it('waits while a role has no live holder: a takeover comes first', () => {
    expect(planSpread({ roles: roles({ a: 'gone', b: 'x' }), agents: ['x', 'y'] })).toBeUndefined();
    expect(planSpread({ roles: roles({ a: undefined, b: 'x' }), agents: ['x', 'y'] })).toBeUndefined();
  });

  it('gives a role only to an agent that can take it', () => {
    const r = roles({ a: 'x', b: 'x', c: 'x', d: 'x' });
    expect(planSpread({ roles: r, agents: ['x', 'y'], canTake: (account) => account !== 'a' })).toEqual([
      { account: 'b', from: 'x', to: 'y' },
      { account: 'c', from: 'x', to: 'y' },
    ]);
  });

  it('leaves the extra role with the agents caching the most, whatever order they are listed in', () => {
    const counts = new Map([['y', 1], ['x', 3], ['z', 0]]);
    expect(Object.fromEntries(spreadTargets(counts, 4))).toEqual({ x: 2, y: 1, z: 1 });
  });
});

/**
 * A pool of accounts whose every agent confirmed every account, driven through the real rules:
 * a departure's roles are taken over by `planAccount` (least loaded first), then the spread's
 * moves are made through `planAccount` with their hand-off, as a replica's settles make them.
 */
class Pool {
  readonly live = new Set<string>();
  readonly records = new Map<string, AccountRecord>();

  constructor(accounts: number) {
    for (let i = 0; i < accounts; i++) {
      const name = `acc-${i}`;
      this.records.set(name, {
        name,
        version: 1,
        generation: 2,
        defs: { 'driver-config': { kind: 'driver-config', settings: {}, at: 1 } },
        registration: { zoneId: 'z', at: 1 },
        state: 'ACTIVE',
        agents: {},
        updatedAt: 1,
      });
    }
  }

  roles(): Map<string, string | undefined> {
    return new Map([...this.records].map(([n, r]) => [n, r.cachingAgentId] as const));
  }

  join(agentId: string): void {
    this.live.add(agentId);
    const entry: AgentResult = { agentId, caching: false, ok: true, generation: 2, assigned: 2, at: 1 };
    for (const r of this.records.values()) r.agents[agentId] = { ...entry };
    this.#settleAll();
  }

  leave(agentId: string): void {
    this.live.delete(agentId);
    this.#settleAll();
  }

  /** Makes the moves through the plan, as the replica of each receiving agent does; returns how many held. */
  move(moves: readonly SpreadMove[]): number {
    let made = 0;
    for (const m of moves) {
      const before = this.records.get(m.account)?.cachingAgentId;
      this.#settle(m.account, m);
      if (before === m.from && this.records.get(m.account)?.cachingAgentId === m.to) made++;
    }
    return made;
  }

  #settleAll(): void {
    for (const name of [...this.records.keys()].sort()) this.#settle(name);
  }

  #settle(name: string, handOff?: SpreadMove): void {
    const record = this.records.get(name) as AccountRecord;
    const presence: Presence = { live: new Map([...this.live].map((id) => [id, { zone: 'z', unzoned: false }] as const)), inGrace: new Set(), readSince: 10 };
    const counts = roleCounts(this.roles(), this.live);
    const changes = planAccount({ record, now: 5, local: new Map(), presence, roles: (id) => counts.get(id) ?? 0, ...(handOff === undefined ? {} : { handOff }) });
    if (changes === undefined) return;
    const agents = { ...record.agents };
    for (const id of changes.removeAgents ?? []) delete agents[id];
    for (const e of changes.setAgents ?? []) agents[e.agentId] = e;
    const next: AccountRecord = { ...record, agents, version: record.version + 1 };
    if (changes.cachingAgentId === null) delete next.cachingAgentId;
    else if (changes.cachingAgentId !== undefined) next.cachingAgentId = changes.cachingAgentId;
    if (changes.cachingEpoch !== undefined) next.cachingEpoch = changes.cachingEpoch;
    this.records.set(name, next);
  }
}

describe('the caching spread over joins and leaves', () => {
  const steps = fc.array(fc.record({ join: fc.boolean(), agent: fc.integer({ min: 0, max: 7 }) }), { minLength: 1, maxLength: 25 });

  it('settles to an even spread after any sequence, with the fewest moves, only from agents above their share', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 60 }), steps, (accounts, events) => {
        const pool = new Pool(accounts);
        for (const { join, agent } of events) {
          const id = `agent-${agent}`;
          const wasEven = pool.live.size > 0 && spreadIsEven(pool.roles(), pool.live);
          if (join && !pool.live.has(id)) pool.join(id);
          else if (!join && pool.live.has(id)) pool.leave(id);
          else continue;
          if (pool.live.size === 0) continue;

          const roles = pool.roles();
          const counts = roleCounts(roles, pool.live);
          // A departure from an even spread leaves it even: the takeovers went to the least loaded.
          if (!join && wasEven) expect(spreadIsEven(roles, pool.live)).toBe(true);
          const moves = planSpread({ roles, agents: pool.live }) as SpreadMove[];
          expect(moves).toHaveLength(fewestMoves([...counts.values()], accounts));
          const targets = spreadTargets(counts, accounts);
          for (const m of moves) expect(counts.get(m.from) ?? 0).toBeGreaterThan(targets.get(m.from) ?? 0);
          expect(new Set(moves.map((m) => m.account)).size).toBe(moves.length);
          expect(pool.move(moves)).toBe(moves.length);
          expect(spreadIsEven(pool.roles(), pool.live)).toBe(true);
          expect(planSpread({ roles: pool.roles(), agents: pool.live })).toEqual([]);
        }
      }),
      { numRuns: 120 },
    );
  });

  it('gives a joining agent its share: floor(M/N) at least', () => {
    const pool = new Pool(10);
    pool.join('a');
    pool.join('b');
    pool.move(planSpread({ roles: pool.roles(), agents: pool.live }) ?? []);
    pool.join('c');
    expect(roleCounts(pool.roles(), ['c']).get('c')).toBe(0);
    pool.move(planSpread({ roles: pool.roles(), agents: pool.live }) ?? []);
    expect(Object.fromEntries(roleCounts(pool.roles(), pool.live))).toEqual({ a: 4, b: 3, c: 3 });
  });
});
