import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { AccountRecord, AgentResult } from '../../accounts/model.ts';
import type { TableRef } from '../core/client.ts';
import { confirmAnswer, confirmAnswerParams } from './answer-write.ts';
import { putClusterStatus } from './cluster-status.ts';
import { createAccount, getAccount, mutateAccount, updateAccount, writeAccount, type AccountChanges } from './records.ts';
import { interceptedTable, operationOf } from '../../../test/support/intercepted-table.ts';

const tables = useTestTables();
const AGENTS = ['a1', 'a2', 'a3'];

/** A client of the same table that keeps the input of every request it sends. */
function recordingTable(t: TableRef): { table: TableRef; sent: { op: string; input: Record<string, unknown> }[] } {
  const sent: { op: string; input: Record<string, unknown> }[] = [];
  const table = interceptedTable(t, (command, send) => {
    sent.push({ op: operationOf(command), input: command.input });
    return send(command);
  });
  return { table, sent };
}

const entry: fc.Arbitrary<AgentResult> = fc.record(
  {
    agentId: fc.constantFrom(...AGENTS),
    caching: fc.boolean(),
    ok: fc.boolean(),
    message: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    generation: fc.option(fc.nat(5), { nil: undefined }),
    assigned: fc.nat(5),
    removing: fc.option(fc.boolean(), { nil: undefined }),
    at: fc.nat(1_000),
  },
  { requiredKeys: ['agentId', 'caching', 'ok', 'at'] },
);

/** Every kind of change a writer makes: set, removed (null) or left (undefined), and entries set and dropped. */
const changes: fc.Arbitrary<AccountChanges> = fc.record(
  {
    registration: fc.option(fc.record({ zoneId: fc.option(fc.constantFrom('z1', 'z2'), { nil: undefined }), at: fc.nat(1_000) }), { nil: null }),
    state: fc.option(fc.constantFrom('INACTIVE' as const, 'ACTIVE' as const, 'FAILED' as const), { nil: null }),
    generation: fc.nat(5),
    lastAssignmentMsg: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
    setAgents: fc.uniqueArray(entry, { selector: (e) => e.agentId, maxLength: 3 }),
    removeAgents: fc.subarray(AGENTS),
    cachingAgentId: fc.option(fc.constantFrom(...AGENTS), { nil: null }),
    cachingEpoch: fc.nat(5),
  },
  { requiredKeys: [] },
).map((c) => ({ ...c, removeAgents: (c.removeAgents ?? []).filter((a) => !(c.setAgents ?? []).some((e) => e.agentId === a)) }));

describe('writeAccount against dynalite', () => {
  it('returns, without asking the table for the item, exactly the item a consistent read finds after any sequence of writes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(changes, { minLength: 1, maxLength: 6 }), fc.boolean(), async (steps, withId) => {
        const t = await tables.fresh();
        const { table, sent } = recordingTable(t);
        await createAccount(t, 'prod', 1);
        let record = (await getAccount(t, 'prod', { consistent: true })) as AccountRecord;
        for (const [i, step] of steps.entries()) {
          record = await writeAccount(table, record, step, 10 + i, withId ? `w-${i}` : undefined);
          expect(await getAccount(t, 'prod', { consistent: true })).toEqual(record);
        }
        expect(sent.map((s) => s.op)).toEqual(steps.map(() => 'Update'));
        for (const s of sent) expect(s.input.ReturnValues).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  }, 300_000);

  it('refuses a write from an item that changed since, changing nothing', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    const read = (await getAccount(t, 'prod', { consistent: true })) as AccountRecord;
    const between = await updateAccount(t, 'prod', read.version, { state: 'INACTIVE', generation: 1 }, 2);
    await expect(writeAccount(t, read, { state: 'ACTIVE', generation: 2 }, 3)).rejects.toMatchObject({ code: 'precondition_failed' });
    expect(await getAccount(t, 'prod', { consistent: true })).toEqual(between);
  });

  it('returns the cluster report, the one write that leaves the version, as the writer read it', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    const created = (await getAccount(t, 'prod', { consistent: true })) as AccountRecord;
    const read = await writeAccount(t, created, { cachingAgentId: 'a1', cachingEpoch: 1 }, 2);
    expect(await putClusterStatus(t, 'prod', 'a1', 1, { reachable: true, since: 3, agentId: 'a1', at: 3 })).toBe(true);
    const after = await writeAccount(t, read, { lastAssignmentMsg: 'm' }, 4);
    const { cluster, ...stored } = (await getAccount(t, 'prod', { consistent: true })) as AccountRecord;
    expect(cluster).toMatchObject({ reachable: true });
    expect(after).toEqual(stored);
  });

  it('mutateAccount writes without asking for the item and returns it as stored', async () => {
    const t = await tables.fresh();
    const { table, sent } = recordingTable(t);
    await createAccount(t, 'prod', 1);
    const { record, changed } = await mutateAccount(table, 'prod', () => ({ registration: { zoneId: 'z1', at: 2 }, state: 'ACTIVE', generation: 1 }), () => 2);
    expect(changed).toBe(true);
    expect(record).toEqual(await getAccount(t, 'prod', { consistent: true }));
    expect(sent.filter((s) => s.op === 'Update').map((s) => s.input.ReturnValues)).toEqual([undefined]);
  });
});

describe('entries and the confirmation condition', () => {
  it('stores `removing` only when true, so the confirmation tests its absence alone', async () => {
    const t = await tables.fresh();
    await createAccount(t, 'prod', 1);
    const created = (await getAccount(t, 'prod', { consistent: true })) as AccountRecord;
    const handedOut: AgentResult = { agentId: 'a1', caching: true, ok: false, assigned: 1, removing: false, at: 2 };
    const read = await writeAccount(t, created, { generation: 1, setAgents: [handedOut] }, 2);
    expect((await getAccount(t, 'prod', { consistent: true }))?.agents.a1).not.toHaveProperty('removing');
    expect(read.agents.a1).not.toHaveProperty('removing');
    const answer = { entry: { ...handedOut, ok: true, generation: 1, at: 3 }, lastAssignmentMsg: 'ok', state: 'ACTIVE' as const };
    const params = confirmAnswerParams(t.tableName, read, answer, 3);
    expect(params.ConditionExpression).not.toContain(' OR ');
    expect(params.ConditionExpression).toContain('attribute_not_exists(agents.#a.removing)');
    const after = await confirmAnswer(t, read, answer, 3);
    expect(after.agents.a1).toEqual({ agentId: 'a1', caching: true, ok: true, generation: 1, assigned: 1, at: 3 });
    expect(after).toEqual(await getAccount(t, 'prod', { consistent: true }));
  });
});
