import {
  DeleteCommand,
  PutCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { TableRef } from './client.ts';
import { tryConditional } from './conditional.ts';
import { PK, sessionKey } from './keys.ts';
import { queryAll } from './query.ts';

/**
 * One item per connected agent instance, written by the driver replica holding its stream. A session
 * is live while `leaseExpiresAt` (ms, set from the driver's receive clock) is in the future.
 */
export interface Session {
  agentId: string;
  zoneId: string;
  /** The driver replica holding the stream; only it renews or ends the session. */
  replicaId: string;
  connectedAt: number;
  leaseExpiresAt: number;
  agentVersion: string;
  /** Names of the static accounts the agent announced. */
  staticAccounts: string[];
}

export function putSessionParams(tableName: string, session: Session): PutCommandInput {
  return { TableName: tableName, Item: { ...sessionKey(session.zoneId, session.agentId), ...session } };
}

export function renewSessionParams(tableName: string, zoneId: string, agentId: string, replicaId: string, leaseExpiresAt: number): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: sessionKey(zoneId, agentId),
    UpdateExpression: 'SET leaseExpiresAt = :lease',
    ConditionExpression: 'replicaId = :replica',
    ExpressionAttributeValues: { ':lease': leaseExpiresAt, ':replica': replicaId },
  };
}

export function endSessionParams(tableName: string, zoneId: string, agentId: string, replicaId: string): DeleteCommandInput {
  return {
    TableName: tableName,
    Key: sessionKey(zoneId, agentId),
    ConditionExpression: 'replicaId = :replica',
    ExpressionAttributeValues: { ':replica': replicaId },
  };
}

/** Live sessions of one zone, or of all zones. The zone filter guards against zones sharing a prefix. */
export function liveSessionsParams(tableName: string, now: number, zoneId?: string): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: zoneId === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :zonePrefix)',
    FilterExpression: zoneId === undefined ? 'leaseExpiresAt > :now' : 'leaseExpiresAt > :now AND zoneId = :zone',
    ExpressionAttributeValues: {
      ':pk': PK.session,
      ':now': now,
      ...(zoneId === undefined ? {} : { ':zonePrefix': `${zoneId}#`, ':zone': zoneId }),
    },
  };
}

/** Records a session; a reconnect through another replica takes the session over. */
export async function putSession(t: TableRef, session: Session): Promise<void> {
  await t.client.send(new PutCommand(putSessionParams(t.tableName, session)));
}

/** Extends the lease; false when another replica took the session over or it was ended. */
export function renewSession(t: TableRef, zoneId: string, agentId: string, replicaId: string, leaseExpiresAt: number): Promise<boolean> {
  return tryConditional(() => t.client.send(new UpdateCommand(renewSessionParams(t.tableName, zoneId, agentId, replicaId, leaseExpiresAt))));
}

/** Ends the session if this replica still holds it. */
export function endSession(t: TableRef, zoneId: string, agentId: string, replicaId: string): Promise<boolean> {
  return tryConditional(() => t.client.send(new DeleteCommand(endSessionParams(t.tableName, zoneId, agentId, replicaId))));
}

export async function liveSessions(t: TableRef, now: number, zoneId?: string): Promise<Session[]> {
  const items = await queryAll(t, liveSessionsParams(t.tableName, now, zoneId));
  return items.map(({ pk: _pk, sk: _sk, ...session }) => session as unknown as Session);
}
