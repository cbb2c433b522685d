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

  record(operation: string, consumed: ConsumedCapacity | ConsumedCapacity[] | undefined): void {
    this.roundTrips++;
    this.operations.set(operation, (this.operations.get(operation) ?? 0) + 1);
    const list = consumed === undefined ? [] : Array.isArray(consumed) ? consumed : [consumed];
    const units = list.reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    if (READ_OPERATIONS.has(operation)) this.readUnits += units;
    else this.writeUnits += units;
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
