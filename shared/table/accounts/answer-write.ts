/**
 * The write of an agent's confirmation that changes nothing but the agent's own entry (and, when
 * the account was not ACTIVE yet, makes it ACTIVE): conditional on what that outcome was decided
 * from, not on the whole item's version. The answers of a zone's agents arrive on the replicas that
 * hold their streams; with the version as the condition, each replica's write refused the other's
 * whenever the other had written since its read, and cost a consistent read and a second write.
 *
 * What an ok answer's outcome depends on (docs/protocol.md#assignment-across-replicas): the account's
 * generation (every change of definition, zone or state by the API raises it), that the entry was
 * handed this generation and is not being taken off the agent, and whether the agent caches the
 * account (the entry carries the caching flag, written whole). A confirmation makes the account
 * ACTIVE whatever the other entries say, so another agent's answer, or a caching move between other
 * agents, written meanwhile changes nothing of it. Any other change of those is a
 * refused write, read again and decided afresh as before.
 */
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord, AgentResult } from '../../accounts/model.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { isConditionFailure } from '../core/conditional.ts';
import { accountFromItem, storedEntry, type AccountChanges } from './records.ts';
import { accountKey } from './keys.ts';

/** The confirmation this write carries: the entry as it becomes, and the item-level changes that go with it. */
export interface ConfirmedAnswer {
  entry: AgentResult;
  lastAssignmentMsg: string;
  /** Set when the account was not ACTIVE yet. */
  state?: 'ACTIVE';
}

/**
 * The changes planned for an answer, when they are an ok confirmation of the agent's own entry and
 * nothing else; undefined when they need the item's version as their condition.
 */
export function confirmationOnly(changes: AccountChanges, agentId: string): ConfirmedAnswer | undefined {
  const { setAgents, lastAssignmentMsg, state, ...rest } = changes;
  if (Object.values(rest).some((v) => v !== undefined)) return undefined;
  if (setAgents?.length !== 1 || typeof lastAssignmentMsg !== 'string') return undefined;
  const [entry] = setAgents as [AgentResult];
  if (entry.agentId !== agentId || !entry.ok || entry.removing === true) return undefined;
  if (state !== undefined && state !== 'ACTIVE') return undefined;
  return { entry, lastAssignmentMsg, ...(state === undefined ? {} : { state }) };
}

export function confirmAnswerParams(tableName: string, record: AccountRecord, answer: ConfirmedAnswer, now: number): UpdateCommandInput {
  const names: Record<string, string> = { '#a': answer.entry.agentId, '#msg': 'lastAssignmentMsg' };
  const values: Record<string, unknown> = {
    ':one': 1,
    ':now': now,
    ':entry': storedEntry(answer.entry),
    ':msg': answer.lastAssignmentMsg,
    ':generation': record.generation,
    ':assigned': answer.entry.assigned ?? 0,
    ':caching': answer.entry.caching,
  };
  const set = ['version = version + :one', 'updatedAt = :now', 'agents.#a = :entry', '#msg = :msg'];
  if (answer.state !== undefined) {
    names['#state'] = 'state';
    values[':state'] = answer.state;
    set.push('#state = :state');
  }
  return {
    TableName: tableName,
    Key: accountKey(record.name),
    UpdateExpression: `SET ${set.join(', ')}`,
    ConditionExpression: [
      'generation = :generation',
      'agents.#a.assigned = :assigned',
      'agents.#a.caching = :caching',
      // `removing` is stored only when true (storedEntry): its absence is the whole test.
      'attribute_not_exists(agents.#a.removing)',
    ].join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  };
}

/** Writes the confirmation; throws `precondition_failed` when what it was decided from changed. */
export async function confirmAnswer(t: TableRef, record: AccountRecord, answer: ConfirmedAnswer, now: number): Promise<AccountRecord> {
  try {
    const out = await t.client.send(new UpdateCommand(confirmAnswerParams(t.tableName, record, answer, now)));
    return accountFromItem(out.Attributes ?? {});
  } catch (err) {
    if (isConditionFailure(err)) throw new VendorError('precondition_failed', `account ${record.name} changed since it was read`, { cause: err });
    throw err;
  }
}
