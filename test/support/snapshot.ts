import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { TableRef } from '../../shared/table/core/client.ts';

/**
 * The whole table as one comparable value: every item, strongly read, in key order, each as JSON with
 * its attributes sorted. Two snapshots are equal exactly when no item was written in between (except
 * a write that put back the very same values).
 */
export interface TableSnapshot {
  /** `pk|sk` → the item as canonical JSON. */
  readonly items: ReadonlyMap<string, string>;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  // Still JSON, so a suite can parse an item back.
  if (value instanceof Set) return `{"$set":[${[...value].map(canonical).sort().join(',')}]}`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export async function tableSnapshot(table: TableRef): Promise<TableSnapshot> {
  const items = new Map<string, string>();
  let start: Record<string, unknown> | undefined;
  do {
    const out = await table.client.send(new ScanCommand({ TableName: table.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
    for (const item of out.Items ?? []) items.set(`${String(item.pk)}|${String(item.sk)}`, canonical(item));
    start = out.LastEvaluatedKey;
  } while (start !== undefined);
  return { items: new Map([...items].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

/** What changed from `before` to `after`, one line per item key; empty when nothing did. */
export function snapshotDiff(before: TableSnapshot, after: TableSnapshot): string[] {
  const lines: string[] = [];
  for (const [key, value] of after.items) {
    const old = before.items.get(key);
    if (old === undefined) lines.push(`added ${key}: ${value.slice(0, 300)}`);
    else if (old !== value) lines.push(`changed ${key}: ${old.slice(0, 300)} -> ${value.slice(0, 300)}`);
  }
  for (const key of before.items.keys()) if (!after.items.has(key)) lines.push(`removed ${key}`);
  return lines;
}
