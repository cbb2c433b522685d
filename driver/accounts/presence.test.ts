import { describe, expect, it } from 'vitest';
import type { Session } from '../../shared/table/agents/sessions.ts';
import { PresenceTracker } from './presence.ts';

const session = (agentId: string, over: Partial<Session> = {}): Session => ({
  agentId,
  zoneId: 'z',
  replicaId: 'other',
  sessionId: `s-${agentId}`,
  connectedAt: 0,
  leaseExpiresAt: 10_000,
  agentVersion: '1',
  staticAccounts: [],
  ...over,
});

describe('PresenceTracker', () => {
  it('takes from the session items where each agent of another replica is and whether its identity allows accounts with no zone', () => {
    const presence = new PresenceTracker(1_000, 0);
    presence.refresh([session('open', { identity: 'a', unzoned: true }), session('closed', { identity: 'b', unzoned: false, zoneId: 'y' }), session('old')], 5_000);
    expect(presence.live).toEqual(
      new Map([
        ['open', { zone: 'z', unzoned: true }],
        ['closed', { zone: 'y', unzoned: false }],
        // Written before identities: not trusted with accounts of no zone.
        ['old', { zone: 'z', unzoned: false }],
      ]),
    );
  });
});
