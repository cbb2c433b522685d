import { GetCommand, PutCommand, type GetCommandInput, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../core/client.ts';
import { compress, decompress, MAX_MESSAGE_JSON_BYTES } from '../core/compressed.ts';
import { cachePk, HEALTH_SK } from './keys.ts';

// The health of an account's cache per kind, as the driver last stored it (`CACHE#<account>` / `HEALTH`).
// The kinds are kept gzip-compressed (`kindsGzip`): their field names repeat for every kind, so a report
// of 60 kinds is well under 1 KB instead of 6.3 KB (a write unit instead of 7), and a cluster of
// thousands of kinds still fits the table's 400 KB an item. Items of earlier versions hold `kinds` as a
// list and are read as they are.

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
  const { kinds, ...rest } = health;
  return { TableName: tableName, Item: { pk: cachePk(account), sk: HEALTH_SK, ...rest, kindsGzip: compress(kinds) } };
}

/** The report an item holds, as this version or an earlier one stored it. */
export function cacheHealthOfItem(item: Record<string, unknown>): CacheHealthRecord {
  const { pk: _pk, sk: _sk, kindsGzip, kinds, ...rest } = item;
  const list = kindsGzip instanceof Uint8Array ? decompress<KindHealthRecord[]>(kindsGzip, MAX_MESSAGE_JSON_BYTES) : ((kinds ?? []) as KindHealthRecord[]);
  return { ...(rest as Omit<CacheHealthRecord, 'kinds'>), kinds: list };
}

export function getCacheHealthParams(tableName: string, account: string): GetCommandInput {
  return { TableName: tableName, Key: { pk: cachePk(account), sk: HEALTH_SK } };
}

export async function putCacheHealth(t: TableRef, account: string, health: CacheHealthRecord): Promise<void> {
  await t.client.send(new PutCommand(putCacheHealthParams(t.tableName, account, health)));
}

export async function getCacheHealth(t: TableRef, account: string): Promise<CacheHealthRecord | undefined> {
  const out = await t.client.send(new GetCommand(getCacheHealthParams(t.tableName, account)));
  return out.Item === undefined ? undefined : cacheHealthOfItem(out.Item);
}
