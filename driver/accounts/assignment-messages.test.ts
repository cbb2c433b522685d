import { describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { messageFor } from './assignment-messages.ts';
import { wantedFor, type AgentPlace } from './wanted.ts';

/** An agent of `zone` whose identity allows accounts with no zone too. */
const at = (zone: string, unzoned = true): AgentPlace => ({ zone, unzoned });

const record = (over: Partial<AccountRecord> = {}): AccountRecord => ({
  name: 'prod',
  version: 1,
  generation: 4,
  defs: { 'driver-config': { kind: 'driver-config', settings: { kubeconfigFile: '/k/def', context: 'c1', kinds: ['pod'] }, at: 1 } },
  registration: { zoneId: 'z', kubeconfigFile: 'encryptedFile:secrets-manager!r:us-east-1!s:kube/prod', at: 1 },
  state: 'ACTIVE',
  agents: { a1: { agentId: 'a1', caching: true, ok: true, generation: 4, assigned: 4, at: 1 } },
  cachingAgentId: 'a1',
  cachingEpoch: 2,
  updatedAt: 1,
  ...over,
});

describe('wantedFor', () => {
  it('sends the registration kubeconfig reference, else the definition own, to agents of the zone only', () => {
    expect(wantedFor(record(), 'a1', at('z'))).toMatchObject({ account: 'prod', generation: 4, kubeconfigRef: 'encryptedFile:secrets-manager!r:us-east-1!s:kube/prod', zoneId: 'z', staticAccount: false, settings: { context: 'c1', kinds: ['pod'] } });
    expect(wantedFor(record({ registration: { at: 1 } }), 'a1', at('anything'))).toMatchObject({ kubeconfigRef: '/k/def', zoneId: '' });
    expect(wantedFor(record(), 'a1', at('elsewhere'))).toBeUndefined();
    expect(wantedFor(record({ state: 'INACTIVE' }), 'a1', at('z'))).toBeUndefined();
  });

  it('sends an account pinned to no zone only to agents whose identity allows unzoned accounts', () => {
    const unzoned = record({ registration: { at: 1 } });
    expect(wantedFor(unzoned, 'a1', at('z', true))).toMatchObject({ account: 'prod', zoneId: '' });
    expect(wantedFor(unzoned, 'a1', at('z', false))).toBeUndefined();
    // A zone's account goes to agents of that zone whatever `unzoned` says.
    expect(wantedFor(record(), 'a1', at('z', false))).toMatchObject({ zoneId: 'z' });
  });
});

describe('messageFor', () => {
  it('assigns what an agent does not hold, with its caching role', () => {
    expect(messageFor('prod', record(), 'a2', at('z'), undefined)).toEqual({
      kind: 'assignAccount',
      body: expect.objectContaining({ account: 'prod', generation: 4, caching: false, cachingEpoch: 2 }),
    });
  });

  it('says nothing when the agent holds what it should, or is waiting to answer it, or refused it', () => {
    expect(messageFor('prod', record(), 'a1', at('z'), { generation: 4, caching: true, cachingEpoch: 2, state: 'held' })).toBeUndefined();
    expect(messageFor('prod', record(), 'a2', at('z'), { generation: 4, caching: false, cachingEpoch: 2, state: 'sent' })).toBeUndefined();
    expect(messageFor('prod', record(), 'a2', at('z'), { generation: 4, caching: false, cachingEpoch: 0, state: 'failed' })).toBeUndefined();
  });

  it('updates the caching role, a new generation, or a hold it has no answer for', () => {
    expect(messageFor('prod', record(), 'a1', at('z'), { generation: 4, caching: true, cachingEpoch: 1, state: 'held' })?.body).toMatchObject({ caching: true, cachingEpoch: 2 });
    expect(messageFor('prod', record(), 'a1', at('z'), { generation: 3, caching: true, cachingEpoch: 2, state: 'held' })?.kind).toBe('assignAccount');
    // Announced in hello, but the table has no answer from this agent: it is asked to confirm.
    expect(messageFor('prod', record(), 'a3', at('z'), { generation: 4, caching: false, cachingEpoch: 2, state: 'held' })?.kind).toBe('assignAccount');
  });

  it('removes what an agent should no longer hold, also when the account is gone', () => {
    expect(messageFor('prod', record({ registration: undefined, state: undefined, generation: 5 }), 'a1', at('z'), { generation: 4, caching: true, cachingEpoch: 2, state: 'held' })).toEqual({
      kind: 'removeAccount',
      body: { account: 'prod', generation: 5 },
    });
    expect(messageFor('prod', undefined, 'a1', at('z'), { generation: 4, caching: true, cachingEpoch: 2, state: 'held' })).toEqual({ kind: 'removeAccount', body: { account: 'prod', generation: 5 } });
    expect(messageFor('prod', undefined, 'a1', at('z'), { generation: 4, caching: false, cachingEpoch: 2, state: 'removing' })).toBeUndefined();
  });
});
