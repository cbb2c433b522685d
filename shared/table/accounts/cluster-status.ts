/**
 * Whether an account's cluster answers its caching agent, kept in the account item (`cluster`) so the
 * account served says it beside `state` without another read (docs/api.md#the-account-served). Only
 * the caching agent at its epoch writes it, and the write leaves `version` alone: it is a report,
 * not a change the driver acts on, and must not make writers of the account's own fields lose races.
 */
import { UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ClusterStatusRecord } from '../../accounts/model.ts';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { accountKey } from './keys.ts';

export function putClusterStatusParams(tableName: string, account: string, cachingAgentId: string, cachingEpoch: number, status: ClusterStatusRecord): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: accountKey(account),
    UpdateExpression: 'SET #cluster = :status',
    ConditionExpression: 'attribute_exists(pk) AND cachingAgentId = :agent AND cachingEpoch = :epoch',
    ExpressionAttributeNames: { '#cluster': 'cluster' },
    ExpressionAttributeValues: { ':status': status, ':agent': cachingAgentId, ':epoch': cachingEpoch },
  };
}

/** Records `status` unless another agent (or epoch) caches the account now; false then. */
export async function putClusterStatus(t: TableRef, account: string, cachingAgentId: string, cachingEpoch: number, status: ClusterStatusRecord): Promise<boolean> {
  return tryConditional(() => t.client.send(new UpdateCommand(putClusterStatusParams(t.tableName, account, cachingAgentId, cachingEpoch, status))));
}
