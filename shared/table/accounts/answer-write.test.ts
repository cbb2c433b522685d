import { describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import type { AccountRecord, AgentResult } from '../../accounts/model.ts';
import type { TableRef } from '../core/client.ts';
import { confirmAnswer, confirmationOnly } from './answer-write.ts';
import { createAccount, getAccount, updateAccount } from './records.ts';

const handedOut = (agentId: string, caching: boolean): AgentResult => ({ agentId, caching, ok: false, assigned: 2, at: 1 });
const confirmed = (e: AgentResult): AgentResult => ({ ...e, ok: true, message: 'ok', generation: 2, at: 5 });

/** An account at generation 2 handed out to a1 (caching) and a2, as a hand-out leaves it. */
async function handedOutAccount(t: TableRef): Promise<AccountRecord> {
  await createAccount(t, 'prod', 1);
  const created = (await getAccount(t, 'prod', { consistent: true })) as AccountRecord;
  return updateAccount(t, 'prod', created.version, { generation: 2, state: 'ACTIVE', cachingAgentId: 'a1', cachingEpoch: 1, setAgents: [handedOut('a1', true), handedOut('a2', false)] }, 2);
}

describe('confirmationOnly', () => {
  it('takes an ok answer that changes only its own entry, and nothing else', () => {
    const entry = confirmed(handedOut('a1', true));
    expect(confirmationOnly({ setAgents: [entry], lastAssignmentMsg: 'ok' }, 'a1')).toEqual({ entry, lastAssignmentMsg: 'ok' });
    expect(confirmationOnly({ setAgents: [entry], lastAssignmentMsg: 'ok', state: 'ACTIVE' }, 'a1')).toMatchObject({ state: 'ACTIVE' });
    // A refusal, a caching move, another agent's entry or another state need the version as their condition.
    expect(confirmationOnly({ setAgents: [{ ...entry, ok: false }], lastAssignmentMsg: 'no' }, 'a1')).toBeUndefined();
    expect(confirmationOnly({ setAgents: [entry], lastAssignmentMsg: 'ok', cachingAgentId: 'a1', cachingEpoch: 2 }, 'a1')).toBeUndefined();
    expect(confirmationOnly({ setAgents: [entry, confirmed(handedOut('a2', false))], lastAssignmentMsg: 'ok' }, 'a1')).toBeUndefined();
    expect(confirmationOnly({ setAgents: [entry], lastAssignmentMsg: 'ok' }, 'a2')).toBeUndefined();
    expect(confirmationOnly({ setAgents: [entry], lastAssignmentMsg: 'ok', state: 'FAILED' }, 'a1')).toBeUndefined();
    expect(confirmationOnly({ setAgents: [entry], lastAssignmentMsg: 'ok', removeAgents: ['a3'] }, 'a1')).toBeUndefined();
  });
});

describe('confirmAnswer (dynalite)', () => {
  const tables = useTestTables();

  it("holds when only another agent's answer was written since the read, and keeps that answer", async () => {
    const t = await tables.fresh();
    const read = await handedOutAccount(t);
    // a2's answer, written by another replica after this one read the item.
    await updateAccount(t, 'prod', read.version, { setAgents: [confirmed(handedOut('a2', false))], lastAssignmentMsg: 'ok' }, 3);
    const after = await confirmAnswer(t, read, { entry: confirmed(read.agents.a1 as AgentResult), lastAssignmentMsg: 'ok' }, 4);
    expect(after.version).toBe(read.version + 2);
    expect(after.agents.a1).toMatchObject({ ok: true, generation: 2, caching: true });
    expect(after.agents.a2).toMatchObject({ ok: true, generation: 2 });
    expect(await getAccount(t, 'prod', { consistent: true })).toEqual(after);
  });

  it('is refused, changing nothing, when the generation, the caching role or the entry changed since the read', async () => {
    const changes: [string, (r: AccountRecord) => Parameters<typeof updateAccount>[3]][] = [
      ['generation', () => ({ generation: 3 })],
      ['caching role', () => ({ cachingAgentId: 'a2', cachingEpoch: 2, setAgents: [handedOut('a1', false), handedOut('a2', true)] })],
      ['entry removing', () => ({ setAgents: [{ ...handedOut('a1', true), removing: true }] })],
      ['entry handed a newer generation', () => ({ setAgents: [{ ...handedOut('a1', true), assigned: 3 }] })],
    ];
    for (const [what, change] of changes) {
      const t = await tables.fresh();
      const read = await handedOutAccount(t);
      const between = await updateAccount(t, 'prod', read.version, change(read), 3);
      await expect(confirmAnswer(t, read, { entry: confirmed(read.agents.a1 as AgentResult), lastAssignmentMsg: 'ok', state: 'ACTIVE' }, 4), what).rejects.toMatchObject({
        code: 'precondition_failed',
      });
      expect(await getAccount(t, 'prod', { consistent: true }), what).toEqual(between);
    }
  });
});
