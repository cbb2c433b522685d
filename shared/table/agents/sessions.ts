import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type GetCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../core/client.ts';
import { tryConditional } from '../core/conditional.ts';
import { PK } from '../core/keys.ts';
import { queryAll } from '../core/query.ts';
import { TTL_ATTRIBUTE } from '../core/schema.ts';
import { sessionKey } from './keys.ts';

/**
 * One item per agent instance (`<zoneId>#<agentId>`), written by the driver replica holding its
 * stream. A session is live while `leaseExpiresAt` (ms, from the driver's receive clock) is in the
 * future. When the stream ends the item stays, marked ended, so that the agent's next stream (on any
 * replica) can resume from it and the driver knows since when the agent is gone; the next stream of
 * the same agent replaces it.
 */
export interface Session {
  agentId: string;
  zoneId: string;
  /** The driver replica holding the stream. */
  replicaId: string;
  /** Id of the stream; renewals and the end are conditional on it, so a newer stream is never undone. */
  sessionId?: string;
  /** Address of the agent as the driver sees it. */
  peer?: string;
  /**
   * Where the replica holding the stream takes wakes (`host:port`, docs/protocol.md#6b-wakes); absent
   * when it takes none. It counts only while the lease does: the API sends to live sessions alone.
   */
  wake?: string;
  connectedAt: number;
  leaseExpiresAt: number;
  agentVersion: string;
  /** The agent identity the stream's credential spoke for (absent on items written before identities). */
  identity?: string;
  /** Whether that identity may be sent accounts pinned to no zone; absent counts as false. */
  unzoned?: boolean;
  /**
   * How many static accounts the agent announced (their definitions are items of their own,
   * `putAgentStaticAccounts`). A count, not the names: a renewal is billed for the whole item, and
   * an agent of a hundred static accounts would pay for its names on every heartbeat.
   */
  staticAccountCount?: number;
  /**
   * The names, on items written by earlier versions: read only for their number (`staticAccountsOf`).
   * Written now with the first name alone: a replica of an earlier version, during a rolling
   * upgrade, reads only whether the list is empty, to remove an ended agent's static accounts.
   */
  staticAccounts?: string[];
  /** When the lease was last renewed (ms), on a message from the agent: its last heartbeat as the table knows it. */
  renewedAt?: number;
  /** Highest reliable agent message processed on this stream; written with renewals, so it may lag. */
  lastProcessedSeq?: number;
  endedAt?: number;
  endReason?: string;
}

/** Session items outlive their lease this long (real DynamoDB deletes them by TTL; the driver's sweep elsewhere). */
export const SESSION_RETENTION_MS = 24 * 3600 * 1000;

const ttl = (ms: number): number => Math.ceil((ms + SESSION_RETENTION_MS) / 1000);

/** How many static accounts the session's agent announced, on items of this version and earlier ones. */
export function staticAccountsOf(s: Pick<Session, 'staticAccountCount' | 'staticAccounts'>): number {
  return s.staticAccountCount ?? s.staticAccounts?.length ?? 0;
}

/** Since when the agent of `s` is gone (ms), or undefined while its session is live at `now`. */
export function goneSince(s: Session, now: number): number | undefined {
  if (s.endedAt !== undefined) return Math.min(s.endedAt, s.leaseExpiresAt);
  return s.leaseExpiresAt > now ? undefined : s.leaseExpiresAt;
}

export function putSessionParams(tableName: string, session: Session): PutCommandInput {
  return {
    TableName: tableName,
    Item: { ...sessionKey(session.zoneId, session.agentId), ...session, [TTL_ATTRIBUTE]: ttl(session.leaseExpiresAt) },
  };
}

export function getSessionParams(tableName: string, zoneId: string, agentId: string): GetCommandInput {
  return { TableName: tableName, Key: sessionKey(zoneId, agentId), ConsistentRead: true };
}

export function renewSessionParams(
  tableName: string,
  zoneId: string,
  agentId: string,
  sessionId: string,
  leaseExpiresAt: number,
  lastProcessedSeq: number,
  renewedAt?: number,
): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: sessionKey(zoneId, agentId),
    UpdateExpression: `SET leaseExpiresAt = :lease, lastProcessedSeq = :seq, #ttl = :ttl${renewedAt === undefined ? '' : ', renewedAt = :renewed'}`,
    ConditionExpression: 'sessionId = :sid AND attribute_not_exists(endedAt)',
    ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
    ExpressionAttributeValues: {
      ':lease': leaseExpiresAt,
      ':seq': lastProcessedSeq,
      ':sid': sessionId,
      ':ttl': ttl(leaseExpiresAt),
      ...(renewedAt === undefined ? {} : { ':renewed': renewedAt }),
    },
  };
}

export function endSessionParams(
  tableName: string,
  zoneId: string,
  agentId: string,
  sessionId: string,
  now: number,
  reason: string,
  lastProcessedSeq: number,
): UpdateCommandInput {
  return {
    TableName: tableName,
    Key: sessionKey(zoneId, agentId),
    UpdateExpression: 'SET leaseExpiresAt = :now, endedAt = :now, endReason = :reason, lastProcessedSeq = :seq, #ttl = :ttl',
    ConditionExpression: 'sessionId = :sid AND attribute_not_exists(endedAt)',
    ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
    ExpressionAttributeValues: { ':now': now, ':reason': reason.slice(0, 512), ':seq': lastProcessedSeq, ':sid': sessionId, ':ttl': ttl(now) },
  };
}

/** Deletes the item of a session that is over, unless a newer stream of the agent replaced it or it came back to life. */
export function deleteSessionParams(tableName: string, zoneId: string, agentId: string, sessionId: string | undefined, now: number): DeleteCommandInput {
  return {
    TableName: tableName,
    Key: sessionKey(zoneId, agentId),
    ConditionExpression: sessionId === undefined ? 'attribute_not_exists(sessionId) AND leaseExpiresAt <= :now' : 'sessionId = :sid AND leaseExpiresAt <= :now',
    ExpressionAttributeValues: { ':now': now, ...(sessionId === undefined ? {} : { ':sid': sessionId }) },
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

export function allSessionsParams(tableName: string): QueryCommandInput {
  return { TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': PK.session }, ConsistentRead: true };
}

function fromItem(item: Record<string, unknown>): Session {
  const { pk: _pk, sk: _sk, [TTL_ATTRIBUTE]: _ttl, ...session } = item;
  return session as unknown as Session;
}

/** Records a session; a reconnect (through any replica) replaces the agent's previous item. */
export async function putSession(t: TableRef, session: Session): Promise<void> {
  await t.client.send(new PutCommand(putSessionParams(t.tableName, session)));
}

export async function getSession(t: TableRef, zoneId: string, agentId: string): Promise<Session | undefined> {
  const out = await t.client.send(new GetCommand(getSessionParams(t.tableName, zoneId, agentId)));
  return out.Item === undefined ? undefined : fromItem(out.Item);
}

/** Extends the lease; false when a newer stream of the agent took the session over, or it was ended. */
export function renewSession(
  t: TableRef,
  zoneId: string,
  agentId: string,
  sessionId: string,
  leaseExpiresAt: number,
  lastProcessedSeq = 0,
  renewedAt?: number,
): Promise<boolean> {
  return tryConditional(() => t.client.send(new UpdateCommand(renewSessionParams(t.tableName, zoneId, agentId, sessionId, leaseExpiresAt, lastProcessedSeq, renewedAt))));
}

/** Marks the session ended (no longer live); false when a newer stream replaced it or it had ended. */
export function endSession(
  t: TableRef,
  zoneId: string,
  agentId: string,
  sessionId: string,
  now: number,
  reason: string,
  lastProcessedSeq = 0,
): Promise<boolean> {
  return tryConditional(() => t.client.send(new UpdateCommand(endSessionParams(t.tableName, zoneId, agentId, sessionId, now, reason, lastProcessedSeq))));
}

export function deleteSession(t: TableRef, s: Session, now: number): Promise<boolean> {
  return tryConditional(() => t.client.send(new DeleteCommand(deleteSessionParams(t.tableName, s.zoneId, s.agentId, s.sessionId, now))));
}

export async function liveSessions(t: TableRef, now: number, zoneId?: string): Promise<Session[]> {
  const items = await queryAll(t, liveSessionsParams(t.tableName, now, zoneId));
  return items.map(fromItem);
}

/** Every session item, live or ended: the partition holds one item per agent instance seen recently. */
export async function allSessions(t: TableRef): Promise<Session[]> {
  return (await queryAll(t, allSessionsParams(t.tableName))).map(fromItem);
}
