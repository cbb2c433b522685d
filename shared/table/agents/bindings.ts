import { DeleteCommand, GetCommand, PutCommand, type DeleteCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { agentBindingKey } from './keys.ts';

/**
 * Which agent identity an agent id belongs to (`AGENTID` / `<agentId>`), and the session that bound
 * it: the one item every replica consults before it records a session, so that two identities never
 * speak for one agent id at once (docs/protocol.md, "Agent identities"). Agent ids are global (account
 * entries, the caching role and static account sources name agents by id alone), so the binding is
 * too, whatever zone the session is in.
 */
export interface AgentBinding {
  agentId: string;
  /** The identity's name. */
  identity: string;
  /** Where the binding session's item is: `SESSION` / `<zoneId>#<agentId>`. */
  zoneId: string;
  sessionId: string;
  at: number;
  /**
   * The lease the session was opened with (ms). While the session's own item is not there (it is
   * written just after the binding), the binding counts as that session, live until this lease ends.
   */
  leaseExpiresAt: number;
}

/**
 * What a new binding may replace: nothing, a binding of the same identity, or exactly the binding
 * the caller read and judged over (its session ended and past the grace).
 */
export type BindingPrecondition = { kind: 'none' } | { kind: 'same-identity' } | { kind: 'replaces'; sessionId: string };

export function putAgentBindingParams(tableName: string, binding: AgentBinding, when: BindingPrecondition): PutCommandInput {
  const base = { TableName: tableName, Item: { ...agentBindingKey(binding.agentId), ...binding } };
  switch (when.kind) {
    case 'none':
      return { ...base, ConditionExpression: 'attribute_not_exists(sk)' };
    case 'same-identity':
      return { ...base, ConditionExpression: 'attribute_not_exists(sk) OR #identity = :identity', ExpressionAttributeNames: { '#identity': 'identity' }, ExpressionAttributeValues: { ':identity': binding.identity } };
    case 'replaces':
      return { ...base, ConditionExpression: 'sessionId = :seen', ExpressionAttributeValues: { ':seen': when.sessionId } };
  }
}

export function deleteAgentBindingParams(tableName: string, agentId: string, sessionId: string): DeleteCommandInput {
  return { TableName: tableName, Key: agentBindingKey(agentId), ConditionExpression: 'sessionId = :sid', ExpressionAttributeValues: { ':sid': sessionId } };
}

export async function getAgentBinding(t: TableRef, agentId: string): Promise<AgentBinding | undefined> {
  const out = await t.client.send(new GetCommand({ TableName: t.tableName, Key: agentBindingKey(agentId), ConsistentRead: true }));
  if (out.Item === undefined) return undefined;
  const { pk: _pk, sk: _sk, ...binding } = out.Item;
  return binding as AgentBinding;
}

/** Records a binding; false when `when` no longer holds (another session bound the id meanwhile). */
export function putAgentBinding(t: TableRef, binding: AgentBinding, when: BindingPrecondition): Promise<boolean> {
  return tryConditional(() => t.client.send(new PutCommand(putAgentBindingParams(t.tableName, binding, when))));
}

/** Drops the binding of a session that is over, unless a newer session bound the id since. */
export function deleteAgentBinding(t: TableRef, agentId: string, sessionId: string): Promise<boolean> {
  return tryConditional(() => t.client.send(new DeleteCommand(deleteAgentBindingParams(t.tableName, agentId, sessionId))));
}
