import { describe, expect, it } from 'vitest';
import type { AccountRecord, AgentResult } from '../../shared/accounts/model.ts';
import { planAccount, type Presence } from './plan.ts';

const NOW = 1_000;

function record(over: Partial<AccountRecord> = {}): AccountRecord {
  return {
    name: 'prod',
    version: 3,
    generation: 2,
    defs: { 'driver-config': { kind: 'driver-config', settings: { kubeconfigFile: '/k/prod' }, at: 1 } },
    registration: { zoneId: 'z', at: 1 },
    state: 'ACTIVE',
    agents: {},
    updatedAt: 1,
    ...over,
  };
}

const entry = (agentId: string, over: Partial<AgentResult> = {}): AgentResult => ({ agentId, caching: false, ok: true, generation: 2, assigned: 2, at: 1, ...over });
/** Agents by zone; their identities allow accounts with no zone too. */
const places = (m: Record<string, string>) => new Map(Object.entries(m).map(([id, zone]) => [id, { zone, unzoned: true }] as const));
const presence = (live: Record<string, string>, inGrace: string[] = [], readSince = NOW): Presence => ({ live: places(live), inGrace: new Set(inGrace), readSince });
const local = places;

describe('planAccount', () => {
  it('records the hand-out to a local agent before it is sent, and elects it to cache with a raised epoch', () => {
    const changes = planAccount({ record: record({ cachingEpoch: 4 }), now: NOW, local: local({ a1: 'z' }), presence: presence({ a1: 'z' }) });
    expect(changes).toEqual({
      setAgents: [{ agentId: 'a1', caching: true, ok: false, assigned: 2, at: NOW }],
      cachingAgentId: 'a1',
      cachingEpoch: 5,
    });
  });

  it('neither hands an account with no zone to an agent whose identity does not allow it, nor elects that agent to cache it', () => {
    const r = record({ registration: { at: 1 }, cachingEpoch: 1 });
    const closed = new Map([['a1', { zone: 'z', unzoned: false }]]);
    const live: Presence = { live: new Map([...closed, ['a2', { zone: 'y', unzoned: true }]]), inGrace: new Set(), readSince: NOW };
    expect(planAccount({ record: r, now: NOW, local: closed, presence: live })).toEqual({ cachingAgentId: 'a2', cachingEpoch: 2 });
    // Held by it before (say, under a credential that allowed it): taken off it.
    const held = record({ registration: { at: 1 }, agents: { a1: entry('a1', { caching: true }) }, cachingAgentId: 'a1', cachingEpoch: 1 });
    expect(planAccount({ record: held, now: NOW, local: closed, presence: live })).toMatchObject({
      setAgents: [{ agentId: 'a1', caching: false, ok: false, removing: true }],
      cachingAgentId: 'a2',
    });
  });

  it('leaves an account alone when everything already matches', () => {
    const r = record({ agents: { a1: entry('a1', { caching: true }) }, cachingAgentId: 'a1', cachingEpoch: 1 });
    expect(planAccount({ record: r, now: NOW, local: local({ a1: 'z' }), presence: presence({ a1: 'z' }) })).toBeUndefined();
  });

  it('keeps the caching agent while it is live or within the grace, whichever replica holds it', () => {
    const r = record({ agents: { a1: entry('a1', { caching: true }), a2: entry('a2') }, cachingAgentId: 'a1', cachingEpoch: 1 });
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: presence({ a1: 'z', a2: 'z' }) })).toBeUndefined();
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: presence({ a2: 'z' }, ['a1']) })).toBeUndefined();
  });

  it('drops an agent gone past the grace and moves the caching role to a live one', () => {
    const r = record({ agents: { a1: entry('a1', { caching: true }), a2: entry('a2') }, cachingAgentId: 'a1', cachingEpoch: 7 });
    expect(planAccount({ record: r, now: NOW, local: local({}), presence: presence({ a2: 'z' }) })).toEqual({
      setAgents: [{ ...entry('a2'), caching: true }],
      removeAgents: ['a1'],
      cachingAgentId: 'a2',
      cachingEpoch: 8,
    });
  });

  it('keeps an entry written after its view of the sessions was read: another replica saw the agent come back since', () => {
    // a1 reconnected through another replica, which recorded its hand-out at 900; this view was read at 800.
    const r = record({ agents: { a1: entry('a1', { ok: false, generation: 1, at: 900 }), a2: entry('a2', { caching: true }) }, cachingAgentId: 'a2', cachingEpoch: 3 });
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: presence({ a2: 'z' }, [], 800) })).toBeUndefined();
    // A view read after the hand-out judges it.
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: presence({ a2: 'z' }, [], 950) })).toEqual({ removeAgents: ['a1'] });
  });

  it('moves caching off an agent that refused the current generation, preferring one that confirmed, then the one caching the fewest', () => {
    const r = record({
      agents: { a1: entry('a1', { caching: true, ok: false }), a2: entry('a2', { ok: false, generation: 1 }), a3: entry('a3') },
      cachingAgentId: 'a1',
      cachingEpoch: 1,
    });
    const changes = planAccount({ record: r, now: NOW, local: local({}), presence: presence({ a1: 'z', a2: 'z', a3: 'z' }) });
    expect(changes).toMatchObject({ cachingAgentId: 'a3', cachingEpoch: 2 });
    const pending = record({ agents: {}, cachingAgentId: undefined });
    const roles = (id: string) => (id === 'b2' ? 1 : 2);
    expect(planAccount({ record: pending, now: NOW, local: local({}), presence: presence({ a9: 'z', b2: 'z' }), roles })).toMatchObject({ cachingAgentId: 'b2' });
    expect(planAccount({ record: pending, now: NOW, local: local({}), presence: presence({ a9: 'z', b2: 'z' }), roles: (id) => 3 - roles(id) })).toMatchObject({ cachingAgentId: 'a9' });
  });

  it('FAILED once every agent it went to refused it, with the last message kept', () => {
    const r = record({ agents: { a1: entry('a1', { caching: true, ok: false, message: 'bad' }), a2: entry('a2', { generation: 1, assigned: 2, ok: false }) }, cachingAgentId: 'a1', cachingEpoch: 1 });
    // a2 has not answered generation 2 yet: nothing is decided.
    expect(planAccount({ record: r, now: NOW, local: local({}), presence: presence({ a1: 'z', a2: 'z' }) })?.state).toBeUndefined();
    const answer = { agentId: 'a2', ok: false, message: 'unreachable', generation: 2 };
    expect(planAccount({ record: r, now: NOW, local: local({}), presence: presence({ a1: 'z', a2: 'z' }), answer })).toMatchObject({
      state: 'FAILED',
      lastAssignmentMsg: 'unreachable',
    });
  });

  it('ACTIVE as soon as one agent confirms, and FAILED when no agent of the zone is there to hold it', () => {
    const r = record({ state: 'FAILED', agents: { a1: entry('a1', { ok: false, generation: 1 }) }, cachingAgentId: 'a1', cachingEpoch: 1 });
    const answer = { agentId: 'a1', ok: true, message: 'connected', generation: 2 };
    expect(planAccount({ record: r, now: NOW, local: local({ a1: 'z' }), presence: presence({ a1: 'z' }), answer })).toMatchObject({
      state: 'ACTIVE',
      lastAssignmentMsg: 'connected',
      setAgents: [{ agentId: 'a1', ok: true, caching: true, generation: 2 }],
    });
    const nobody = record({ agents: {} });
    expect(planAccount({ record: nobody, now: NOW, local: local({ b1: 'other' }), presence: presence({ b1: 'other' }) })).toEqual({
      state: 'FAILED',
      lastAssignmentMsg: 'no agent is connected in zone z to hold the account',
    });
  });

  it('waits for a live agent of another replica that has not been handed the account yet', () => {
    expect(planAccount({ record: record(), now: NOW, local: local({}), presence: presence({ remote: 'z' }) })).toEqual({ cachingAgentId: 'remote', cachingEpoch: 1 });
  });

  it('takes an account that is no longer wanted off local agents and clears the caching role, keeping the epoch', () => {
    const r = record({ registration: undefined, state: undefined, generation: 3, agents: { a1: entry('a1', { caching: true }) }, cachingAgentId: 'a1', cachingEpoch: 4 });
    expect(planAccount({ record: r, now: NOW, local: local({ a1: 'z' }), presence: presence({ a1: 'z' }) })).toEqual({
      setAgents: [{ agentId: 'a1', caching: false, ok: false, assigned: 3, removing: true, at: NOW }],
      cachingAgentId: null,
    });
  });

  it('keeps no state for a static account, which only its announcing agents hold', () => {
    const r = record({
      registration: undefined,
      state: undefined,
      generation: 0,
      defs: { 'agent:a1': { kind: 'static-agent-config', agentId: 'a1', zoneId: 'z', settings: {}, at: 1 } },
    });
    const changes = planAccount({ record: r, now: NOW, local: local({ a1: 'z', a2: 'z' }), presence: presence({ a1: 'z', a2: 'z' }) });
    expect(changes).toEqual({ setAgents: [{ agentId: 'a1', caching: true, ok: false, assigned: 1, at: NOW }], cachingAgentId: 'a1', cachingEpoch: 1 });
  });
  it('hands the caching role over as the spread planned it, only while the giver still holds it and the taker confirmed', () => {
    const r = record({ agents: { a1: entry('a1', { caching: true }), a2: entry('a2'), a3: entry('a3', { generation: 1 }) }, cachingAgentId: 'a1', cachingEpoch: 4 });
    const live = presence({ a1: 'z', a2: 'z', a3: 'z' });
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: live, handOff: { from: 'a1', to: 'a2' } })).toEqual({
      setAgents: [{ ...entry('a1'), caching: false }, { ...entry('a2'), caching: true }],
      cachingAgentId: 'a2',
      cachingEpoch: 5,
    });
    // Moved elsewhere meanwhile, or to an agent that has not confirmed this generation: nothing.
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: live, handOff: { from: 'a9', to: 'a2' } })).toBeUndefined();
    expect(planAccount({ record: r, now: NOW, local: local({ a3: 'z' }), presence: live, handOff: { from: 'a1', to: 'a3' } })).toBeUndefined();
  });

  it('gives a role whose agent left to the agent caching the fewest roles', () => {
    const r = record({ agents: { a2: entry('a2'), a3: entry('a3') }, cachingAgentId: 'gone', cachingEpoch: 1 });
    const roles = (id: string) => (id === 'a2' ? 5 : 3);
    expect(planAccount({ record: r, now: NOW, local: local({ a2: 'z' }), presence: presence({ a2: 'z', a3: 'z' }), roles })).toMatchObject({ cachingAgentId: 'a3' });
  });
});
