/**
 * What a table request is about, for `bench:fleet`'s per-step counts (bench/fleet-table.ts with
 * `BENCH_TABLE_KINDS=1`): the operation and the partitions of the keys it names.
 */

/** The partition a DynamoDB JSON key names, without what follows its `#` (`HELD#a1` is `HELD#`, `ACCOUNT#3` is `ACCOUNT#`). */
function partition(key: unknown): string {
  const pk = (key as { pk?: { S?: unknown } } | undefined)?.pk?.S;
  return typeof pk === 'string' ? pk.replace(/#.*$/, '#') : '?';
}

interface RequestBody {
  Key?: unknown;
  ExpressionAttributeValues?: Record<string, { S?: unknown }>;
  RequestItems?: Record<string, { PutRequest?: { Item?: unknown }; DeleteRequest?: { Key?: unknown } }[] | { Keys?: unknown[] }>;
}

/** What a request is about, as `<operation> <partitions>` (`<operation> <n keys>` for a batch read). */
export function requestKind(operation: string, body: string): string | undefined {
  let parsed: RequestBody;
  try {
    parsed = JSON.parse(body) as RequestBody;
  } catch {
    return undefined;
  }
  if (operation === 'Query') return `Query ${partition({ pk: parsed.ExpressionAttributeValues?.[':pk'] })}`;
  if (operation === 'UpdateItem' || operation === 'GetItem' || operation === 'PutItem') return `${operation} ${partition(parsed.Key ?? (parsed as { Item?: unknown }).Item)}`;
  const [items] = Object.values(parsed.RequestItems ?? {});
  if (operation === 'BatchWriteItem' && Array.isArray(items)) {
    return `BatchWriteItem ${[...new Set(items.map((r) => partition(r.PutRequest?.Item ?? r.DeleteRequest?.Key)))].sort().join('+')}`;
  }
  if (operation === 'BatchGetItem' && items !== undefined && !Array.isArray(items)) {
    const n = items.Keys?.length ?? 0;
    return `BatchGetItem ${n === 1 ? '1 key' : n <= 10 ? '2-10 keys' : n <= 50 ? '11-50 keys' : '51-100 keys'}`;
  }
  return undefined;
}
