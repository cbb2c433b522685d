import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';

const READ_OPERATIONS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan']);

/**
 * Adds up the capacity units DynamoDB reports for every command a client sends. Capacity is the cost
 * of a request that does not depend on the machine, so benchmarks and tests compare it directly.
 */
export class CapacityMeter {
  readUnits = 0;
  writeUnits = 0;
  roundTrips = 0;
  /** Round trips by operation (`UpdateItem`, `BatchGetItem`, ...). */
  readonly operations = new Map<string, number>();
  /**
   * Write units by the kind of partition written (the key's text up to its first `#`, as `RESOURCE`),
   * for requests whose every item is in partitions of one kind; `mixed` for the others. A figure
   * about one kind of item (the cache's objects) is then not swelled by the other writes of its window.
   */
  readonly writeUnitsByPartition = new Map<string, number>();

  record(operation: string, consumed: ConsumedCapacity | ConsumedCapacity[] | undefined, input?: unknown): void {
    this.roundTrips++;
    this.operations.set(operation, (this.operations.get(operation) ?? 0) + 1);
    const list = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
    const units = list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    if (READ_OPERATIONS.has(operation)) this.readUnits += units;
    else {
      this.writeUnits += units;
      const kind = partitionKindOf(input);
      if (units > 0) this.writeUnitsByPartition.set(kind, (this.writeUnitsByPartition.get(kind) ?? 0) + units);
    }
  }

  snapshot(): { readUnits: number; writeUnits: number; roundTrips: number } {
    return { readUnits: this.readUnits, writeUnits: this.writeUnits, roundTrips: this.roundTrips };
  }

  /** What was consumed since `before` (a snapshot). */
  since(before: { readUnits: number; writeUnits: number; roundTrips: number }): {
    readUnits: number;
    writeUnits: number;
    roundTrips: number;
  } {
    return {
      readUnits: this.readUnits - before.readUnits,
      writeUnits: this.writeUnits - before.writeUnits,
      roundTrips: this.roundTrips - before.roundTrips,
    };
  }
}

/** A key's `pk` in either form the clients send it: plain (document client) or `{ S }` (low level). */
function pkText(key: unknown): string | undefined {
  const pk = (key as { pk?: unknown } | undefined)?.pk;
  if (typeof pk === 'string') return pk;
  const s = (pk as { S?: unknown } | undefined)?.S;
  return typeof s === 'string' ? s : undefined;
}

/** The one kind of partition a write request touches (`mixed` when several, `unknown` without keys). */
function partitionKindOf(input: unknown): string {
  const request = input as { Item?: unknown; Key?: unknown; RequestItems?: Record<string, { PutRequest?: { Item?: unknown }; DeleteRequest?: { Key?: unknown } }[]>; TransactItems?: unknown[] } | undefined;
  const keys: unknown[] = [];
  if (request?.Item !== undefined) keys.push(request.Item);
  if (request?.Key !== undefined) keys.push(request.Key);
  for (const writes of Object.values(request?.RequestItems ?? {})) for (const w of writes) keys.push(w.PutRequest?.Item ?? w.DeleteRequest?.Key);
  for (const t of request?.TransactItems ?? []) for (const part of Object.values(t as Record<string, { Item?: unknown; Key?: unknown }>)) keys.push(part.Item ?? part.Key);
  const kinds = new Set(keys.map((k) => pkText(k)?.split('#')[0] ?? 'unknown'));
  return kinds.size === 1 ? [...kinds][0]! : kinds.size === 0 ? 'unknown' : 'mixed';
}
