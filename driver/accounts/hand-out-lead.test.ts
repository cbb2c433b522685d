import { describe, expect, it } from 'vitest';
import type { AccountRecord, AgentResult } from '../../shared/accounts/model.ts';
import { handOutLead } from './hand-out-lead.ts';
import type { Presence } from './plan.ts';

function record(agents: Record<string, AgentResult> = {}): AccountRecord {
  return {
    name: 'prod',
    version: 3,
    generation: 2,
    defs: { 'driver-config': { kind: 'driver-config', settings: {}, at: 1 } },
    registration: { zoneId: 'z', at: 1 },
    state: 'ACTIVE',
    agents,
    updatedAt: 1,
  };
}

const places = (m: Record<string, string>) => new Map(Object.entries(m).map(([id, zone]) => [id, { zone, unzoned: false }] as const));
const presence = (live: Record<string, string>): Presence => ({ live: places(live), inGrace: new Set(), readSince: 0 });
const handed = (agentId: string): AgentResult => ({ agentId, caching: false, ok: false, assigned: 2, at: 1 });

describe('handOutLead', () => {
  const live = presence({ a1: 'z', a2: 'z', b1: 'y' });

  it('the replica of the waiting agent with the smallest id leads, for every waiting agent of the zone', () => {
    const lead = handOutLead(record(), places({ a1: 'z' }), live);
    expect(lead.leads).toBe(true);
    expect([...lead.others.keys()]).toEqual(['a2']);
    expect(handOutLead(record(), places({ a2: 'z' }), live)).toEqual({ leads: false, others: new Map(), ownWaiting: true });
  });

  it('a replica with no waiting agent of its own leaves the account and does not look again', () => {
    expect(handOutLead(record(), places({ b1: 'y' }), live)).toMatchObject({ leads: false, ownWaiting: false });
  });

  it('counts only agents still waiting: once the smallest has its entry, the next one leads for itself', () => {
    const lead = handOutLead(record({ a1: handed('a1') }), places({ a2: 'z' }), live);
    expect(lead).toEqual({ leads: true, others: new Map(), ownWaiting: true });
  });

  it('with nobody waiting, every replica settles as before', () => {
    const all = record({ a1: handed('a1'), a2: handed('a2') });
    expect(handOutLead(all, places({ b1: 'y' }), live).leads).toBe(true);
    expect(handOutLead(record(), new Map(), presence({})).leads).toBe(true);
  });

  it('a replica that must take the account off one of its agents writes at once, leading or not', () => {
    const moved = { ...record({ b1: { ...handed('b1'), ok: true, generation: 1 } }) };
    const lead = handOutLead(moved, places({ b1: 'y' }), live);
    expect(lead).toEqual({ leads: true, others: new Map(), ownWaiting: false });
  });
});
