import { GetCommand, PutCommand, type GetCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../core/client.ts';
import { cachePk, HEALTH_SK } from './keys.ts';

// The health of an account's cache per kind, as the driver last stored it (`CACHE#<account>` / `HEALTH`).

export interface KindHealthRecord {
  group: string;
  kind: string;
  scopes: number;
  watching: number;
  objects: number;
  /** ms (driver clock) of the last watch event, when there was one. */
  lastEventAt?: number;
  relists: number;
  expired: number;
  lastError?: string;
  lastErrorAt?: number;
}

export interface CacheHealthRecord {
  agentId: string;
  cachingEpoch: number;
  /** When the driver stored it (ms). */
  at: number;
  kinds: KindHealthRecord[];
}

export function putCacheHealthParams(tableName: string, account: string, health: CacheHealthRecord): PutCommandInput {
  return { TableName: tableName, Item: { pk: cachePk(account), sk: HEALTH_SK, ...health } };
}

export function getCacheHealthParams(tableName: string, account: string): GetCommandInput {
  return { TableName: tableName, Key: { pk: cachePk(account), sk: HEALTH_SK } };
}

export async function putCacheHealth(t: TableRef, account: string, health: CacheHealthRecord): Promise<void> {
  await t.client.send(new PutCommand(putCacheHealthParams(t.tableName, account, health)));
}

export async function getCacheHealth(t: TableRef, account: string): Promise<CacheHealthRecord | undefined> {
  const out = await t.client.send(new GetCommand(getCacheHealthParams(t.tableName, account)));
  if (out.Item === undefined) return undefined;
  const { pk: _pk, sk: _sk, ...rest } = out.Item;
  return rest as unknown as CacheHealthRecord;
}
