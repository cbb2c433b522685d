import { describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../shared/accounts/model.ts';
import { ReplicaAccounts } from './replica-accounts.ts';

const record = (name: string, zoneId: string | undefined, state: AccountRecord['state'] = 'ACTIVE'): AccountRecord => ({
  name,
  version: 1,
  generation: 1,
  defs: {},
  registration: { ...(zoneId === undefined ? {} : { zoneId }), at: 1 },
  ...(state === undefined ? {} : { state }),
  agents: {},
  updatedAt: 1,
});

describe('ReplicaAccounts', () => {
  it('finds the activated accounts of a zone and those without a zone, following every change', () => {
    const cache = new ReplicaAccounts();
    cache.set(record('blue-1', 'blue'));
    cache.set(record('blue-2', 'blue', 'FAILED'));
    cache.set(record('idle', 'blue', 'INACTIVE'));
    cache.set(record('anywhere', undefined));
    expect(cache.activatedFor('blue').sort()).toEqual(['anywhere', 'blue-1', 'blue-2']);
    expect(cache.activatedFor('green')).toEqual(['anywhere']);
    cache.set(record('blue-1', 'green'));
    cache.delete('blue-2');
    expect(cache.activatedFor('blue')).toEqual(['anywhere']);
    expect(cache.activatedFor('green').sort()).toEqual(['anywhere', 'blue-1']);
    expect([...cache.names()].sort()).toEqual(['anywhere', 'blue-1', 'idle']);
  });
  it('counts the caching roles per agent, following every change', () => {
    const cache = new ReplicaAccounts();
    cache.set({ ...record('a', 'blue'), cachingAgentId: 'x' });
    cache.set({ ...record('b', 'blue'), cachingAgentId: 'x' });
    cache.set({ ...record('c', 'blue'), cachingAgentId: 'y' });
    expect([cache.rolesOf('x'), cache.rolesOf('y'), cache.rolesOf('z')]).toEqual([2, 1, 0]);
    cache.set({ ...record('b', 'blue'), cachingAgentId: 'z' });
    cache.delete('c');
    expect([cache.rolesOf('x'), cache.rolesOf('y'), cache.rolesOf('z')]).toEqual([1, 0, 1]);
    expect(Object.fromEntries([...cache.zones()].map(([z, names]) => [z, [...names].sort()]))).toEqual({ blue: ['a', 'b'] });
  });
});
