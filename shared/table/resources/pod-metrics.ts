import { type BatchWriteCommandInput, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { BATCH_WRITE_LIMIT, batchWrite } from '../core/batch.ts';
import type { TableRef } from '../core/client.ts';
import { compress, decompress } from '../core/compressed.ts';
import { queryAll } from '../core/query.ts';
import { podMetricsPk } from './keys.ts';

/**
 * The latest pod metrics of each account (docs/table.md): `PODMETRICS#<account>` / `<namespace>#<part>`,
 * each item holding the pods of one namespace as gzip-compressed JSON (`podsGzip`). A namespace is one
 * item until its pods pass `NAMESPACE_PART_BYTES` of JSON, so a reading of an account costs a write unit
 * per KB of compressed metrics instead of one per pod, every 20 seconds; compressed, a pod's repeated
 * field names and units cost a fraction of their text. Items of earlier versions hold the JSON as text
 * (`pods`) and are read as they are until the next reading replaces them.
 */

export interface ContainerUsageRecord {
  name: string;
  cpu: string;
  memory: string;
}

export interface PodUsageRecord {
  namespace: string;
  name: string;
  timestamp: string;
  window: string;
  containers: ContainerUsageRecord[];
}

export interface NamespaceMetrics {
  namespace: string;
  pods: PodUsageRecord[];
  /** When the driver stored them (ms). */
  at: number;
}

/** Items stay well under DynamoDB's 400 KB limit. */
export const NAMESPACE_PART_BYTES = 64 * 1024;

/**
 * The most one part's JSON can be: its pods up to `NAMESPACE_PART_BYTES`, then one more pod, which the
 * driver's checks bound (docs/protocol.md#resource-keys: 256 containers of bounded names and values).
 * A read stops past it rather than inflate whatever the attribute holds.
 */
const MAX_PART_JSON_BYTES = 1024 * 1024;

function podsOf(item: Record<string, unknown>): PodUsageRecord[] {
  if (item.podsGzip instanceof Uint8Array) return decompress<PodUsageRecord[]>(item.podsGzip, MAX_PART_JSON_BYTES);
  return JSON.parse(item.pods as string) as PodUsageRecord[];
}

function partSk(namespace: string, part: number): string {
  return `${namespace}#${String(part).padStart(4, '0')}`;
}

/** The items holding one namespace's pods: one, or more when they do not fit `NAMESPACE_PART_BYTES`. */
export function namespaceMetricsItems(account: string, m: NamespaceMetrics): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  let part: PodUsageRecord[] = [];
  let bytes = 0;
  const flush = () => {
    items.push({ pk: podMetricsPk(account), sk: partSk(m.namespace, items.length), namespace: m.namespace, at: m.at, podsGzip: compress(part) });
    part = [];
    bytes = 0;
  };
  for (const pod of m.pods) {
    const size = JSON.stringify(pod).length + 1;
    if (bytes + size > NAMESPACE_PART_BYTES && part.length > 0) flush();
    part.push(pod);
    bytes += size;
  }
  if (part.length > 0 || items.length === 0) flush();
  return items;
}

export function writePodMetricsParams(tableName: string, puts: readonly Record<string, unknown>[], deletes: readonly string[], account: string): BatchWriteCommandInput {
  if (puts.length + deletes.length > BATCH_WRITE_LIMIT) throw new RangeError(`at most ${BATCH_WRITE_LIMIT} writes per batch`);
  return {
    RequestItems: {
      [tableName]: [
        ...puts.map((Item) => ({ PutRequest: { Item } })),
        ...deletes.map((sk) => ({ DeleteRequest: { Key: { pk: podMetricsPk(account), sk } } })),
      ],
    },
  };
}

export function podMetricsParams(tableName: string, account: string, keysOnly = false): QueryCommandInput {
  return {
    TableName: tableName,
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': podMetricsPk(account) },
    ...(keysOnly ? { ProjectionExpression: 'sk, #ns, #at', ExpressionAttributeNames: { '#ns': 'namespace', '#at': 'at' } } : {}),
  };
}

export interface ReplacePodMetricsOptions {
  /** When a whole reading is known: every namespace outside it is dropped. */
  only?: ReadonlySet<string>;
  /** Namespaces no reading has covered since then (ms) are dropped: their pods are gone. */
  staleBefore?: number;
}

/** Replaces the metrics of the namespaces in `readings`, and drops the namespaces `options` say are gone. */
export async function replacePodMetrics(t: TableRef, account: string, readings: readonly NamespaceMetrics[], options: ReplacePodMetricsOptions = {}): Promise<void> {
  const puts = readings.flatMap((m) => namespaceMetricsItems(account, m));
  const written = new Set(puts.map((p) => p.sk as string));
  const covered = new Set(readings.map((m) => m.namespace));
  const gone = (namespace: string, at: number) =>
    covered.has(namespace) || (options.only !== undefined && !options.only.has(namespace)) || (options.staleBefore !== undefined && at < options.staleBefore);
  const existing = await queryAll(t, podMetricsParams(t.tableName, account, true));
  const deletes = existing.filter((i) => !written.has(i.sk as string) && gone(i.namespace as string, i.at as number)).map((i) => i.sk as string);
  const requests: { put?: Record<string, unknown>; del?: string }[] = [...puts.map((put) => ({ put })), ...deletes.map((del) => ({ del }))];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_LIMIT) {
    const slice = requests.slice(i, i + BATCH_WRITE_LIMIT);
    await batchWrite(
      t,
      writePodMetricsParams(
        t.tableName,
        slice.flatMap((r) => (r.put === undefined ? [] : [r.put])),
        slice.flatMap((r) => (r.del === undefined ? [] : [r.del])),
        account,
      ),
    );
  }
}

/** Every pod's latest metrics of an account, by namespace and name. */
export async function podMetrics(t: TableRef, account: string): Promise<{ pods: PodUsageRecord[]; at?: number }> {
  const items = await queryAll(t, podMetricsParams(t.tableName, account));
  const pods = items.flatMap((i) => podsOf(i));
  pods.sort((a, b) => (a.namespace === b.namespace ? a.name.localeCompare(b.name) : a.namespace.localeCompare(b.namespace)));
  const at = items.reduce<number | undefined>((max, i) => Math.max(max ?? 0, i.at as number), undefined);
  return at === undefined ? { pods } : { pods, at };
}

