/**
 * Where `bench:fleet`'s table writes land (`BENCH_TABLE_PARTITIONS=1`): each write request's items by
 * the word of their partition key (`ACCOUNT#` and `CHANGE#` for the 8 shards of each, `HELD#` for the
 * agents' partitions, `SESSION`, ...: what follows a `#` dropped, as bench/fleet-request-kind.ts names
 * them), counted per partition per second of the table's clock, so a run can say how many partitions
 * of a word took writes, the peak writes per second of the busiest one (what DynamoDB's per-partition
 * limit is about), and what that is in write capacity units (one per 1 KB of the item written:
 * docs/table.md#where-the-writes-land).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

const WRITES = new Set(['UpdateItem', 'PutItem', 'DeleteItem', 'BatchWriteItem']);

interface WriteBody {
  Key?: { pk?: { S?: unknown } };
  Item?: { pk?: { S?: unknown } };
  RequestItems?: Record<string, { PutRequest?: { Item?: { pk?: { S?: unknown } } }; DeleteRequest?: { Key?: { pk?: { S?: unknown } } } }[]>;
}

function partitionKey(key: { pk?: { S?: unknown } } | undefined): string {
  const pk = key?.pk?.S;
  return typeof pk === 'string' ? pk : '?';
}

/** A partition's word: its key without what follows a `#` (`HELD#agent-1` is `HELD#`, one partition per agent). */
export function partitionWord(pk: string): string {
  return pk.replace(/#.*$/, '#');
}

/** The partition key of each item a write request writes (none for a read or an unreadable body). */
export function writtenPartitions(operation: string, body: string): string[] {
  if (!WRITES.has(operation)) return [];
  let parsed: WriteBody;
  try {
    parsed = JSON.parse(body) as WriteBody;
  } catch {
    return [];
  }
  if (operation !== 'BatchWriteItem') return [partitionKey(parsed.Key ?? parsed.Item)];
  return Object.values(parsed.RequestItems ?? {}).flatMap((requests) => requests.map((r) => partitionKey(r.PutRequest?.Item ?? r.DeleteRequest?.Key)));
}

/** Items written per partition key per second (seconds since the epoch, as keys). */
export type WritesPerSecond = Record<string, Record<string, number>>;

export function countWrites(into: WritesPerSecond, atMs: number, partitions: readonly string[]): void {
  if (partitions.length === 0) return;
  const second = (into[String(Math.floor(atMs / 1000))] ??= {});
  for (const p of partitions) second[p] = (second[p] ?? 0) + 1;
}

export interface PartitionWrites {
  writes: number;
  /** The partitions of the word written to (up to 8 for `ACCOUNT#` and `CHANGE#`, one per agent for `HELD#`, one for `SESSION`). */
  partitions: number;
  /** The most writes the word's partitions took together in one second of the window. */
  peak_per_second: number;
  /** The most writes one partition of the word took in one second: what DynamoDB's per-partition limit is about. */
  busiest_partition_peak_per_second: number;
  mean_per_second: number;
}

/** Per partition word, over the seconds from `fromMs` to `toMs` (the first and last, partly in it, counted). */
export function partitionWrites(perSecond: WritesPerSecond, fromMs: number, toMs: number): Record<string, PartitionWrites> {
  const first = Math.floor(fromMs / 1000);
  const last = Math.floor(toMs / 1000);
  const seconds = Math.max(1, (toMs - fromMs) / 1000);
  const out: Record<string, PartitionWrites> = {};
  const keys = new Map<string, Set<string>>();
  for (let s = first; s <= last; s++) {
    const inSecond = new Map<string, number>();
    for (const [pk, n] of Object.entries(perSecond[String(s)] ?? {})) {
      const word = partitionWord(pk);
      const row = (out[word] ??= { writes: 0, partitions: 0, peak_per_second: 0, busiest_partition_peak_per_second: 0, mean_per_second: 0 });
      row.writes += n;
      row.busiest_partition_peak_per_second = Math.max(row.busiest_partition_peak_per_second, n);
      inSecond.set(word, (inSecond.get(word) ?? 0) + n);
      let seen = keys.get(word);
      if (seen === undefined) keys.set(word, (seen = new Set()));
      seen.add(pk);
    }
    for (const [word, n] of inSecond) (out[word] as PartitionWrites).peak_per_second = Math.max((out[word] as PartitionWrites).peak_per_second, n);
  }
  for (const [word, row] of Object.entries(out)) {
    row.partitions = keys.get(word)?.size ?? 0;
    row.mean_per_second = Math.round((10 * row.writes) / seconds) / 10;
  }
  return out;
}

/** How many bytes DynamoDB counts for an attribute value (names and values by its item size rules). */
function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\.|^0+|e.*$/gi, '').length / 2) + 1;
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.L !== undefined) return 3 + v.L.reduce((sum, e) => sum + 1 + valueBytes(e), 0);
  if (v.M !== undefined) return 3 + itemBytes(v.M) + Object.keys(v.M).length;
  if (v.SS !== undefined) return v.SS.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  if (v.NS !== undefined) return v.NS.reduce((sum, n) => sum + valueBytes({ N: n }), 0);
  return 0;
}

/** An item's size as DynamoDB counts it: every attribute's name and value. */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let sum = 0;
  for (const [name, value] of Object.entries(item)) sum += Buffer.byteLength(name) + valueBytes(value);
  return sum;
}

/** Write capacity units of one standard write of an item of `bytes` (1 per KB, rounded up). */
export function writeUnits(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 1024));
}
