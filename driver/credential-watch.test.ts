import { describe, expect, it } from 'vitest';
import { useTestTables } from '../test/support/table.ts';
import { captureLogger } from '../test/capture-log.ts';
import { faultyTable } from '../test/support/store-faults.ts';
import { ManualClock } from '../test/support/manual-clock.ts';
import type { VendorError } from '../shared/errors.ts';
import type { StoredIdentity, StoredToken } from '../shared/table/agents/identities.ts';
import { credentialVerdict, recheckCredentials } from './credential-watch.ts';

const identity = { name: 'edge', zones: ['z'], unzoned: false, agentIds: ['*'], staticAccounts: [] };
const stored = (over: Partial<StoredIdentity> = {}): StoredIdentity => ({ ...identity, incarnation: 'i1', createdAt: 0, updatedAt: 0, ...over });
const token: StoredToken = { tokenId: 't1', identity: 'edge', incarnation: 'i1', digest: '', createdAt: 0 };
const table = (identities: StoredIdentity[], tokens: StoredToken[]) => ({ identities: new Map(identities.map((i) => [i.name, i])), tokens: new Map(tokens.map((t) => [t.tokenId, t])) });
const issued = { identity, credential: { kind: 'issued-token' as const, tokenId: 't1', incarnation: 'i1' } };

describe('credentialVerdict', () => {
  it('keeps a stream whose token and identity are as they were', () => {
    expect(credentialVerdict(issued, 10, table([stored()], [token]))).toBeUndefined();
  });

  it('ends it when the token is revoked, the identity deleted or made again, or the token expired', () => {
    expect(credentialVerdict(issued, 10, table([stored()], []))?.message).toBe('the agent token was revoked');
    expect(credentialVerdict(issued, 10, table([], [token]))?.code).toBe('unauthenticated');
    expect(credentialVerdict(issued, 10, table([stored({ incarnation: 'i2' })], [token]))?.code).toBe('unauthenticated');
    const expiring = { identity, credential: { ...issued.credential, notAfter: 10 } };
    expect(credentialVerdict(expiring, 9, table([stored()], [token]))).toBeUndefined();
    expect(credentialVerdict(expiring, 10, table([stored()], [token]))?.message).toBe('the agent token has expired');
  });

  it('asks for a reconnect when the allowances changed', () => {
    const verdict = credentialVerdict(issued, 10, table([stored({ zones: ['other'] })], [token]));
    expect(verdict?.code).toBe('unavailable');
  });

  it('leaves identities of the file alone, apart from expiry', () => {
    expect(credentialVerdict({ identity, credential: { kind: 'file-token' } }, 10, table([], []))).toBeUndefined();
    expect(credentialVerdict({ identity, credential: { kind: 'certificate', notAfter: 5 } }, 10, undefined)?.message).toBe('the client certificate has expired');
  });
});

describe('recheckCredentials', () => {
  const tables = useTestTables();

  it('ends no stream while the table does not answer, and says so', async () => {
    const logs = captureLogger();
    const ended: VendorError[] = [];
    const { table: broken, faults } = await faultyTable(await tables.fresh(), { maxAttempts: 1 });
    faults.set({ kind: 'error', name: 'InternalServerError', status: 500 });
    await recheckCredentials({
      table: broken,
      clock: new ManualClock(10),
      log: logs.log,
      streams: () => [{ ...issued, sessionId: 's', agentId: 'a', end: (e) => ended.push(e) }],
    });
    expect(ended).toEqual([]);
    expect(logs.text()).toContain('agent credentials could not be checked against the table');
    await faults.close();
  });
});
