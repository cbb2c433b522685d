import { describe, expect, it } from 'vitest';
import { OPERATION_QUEUE_SHARDS, OPERATION_SHARDS } from '../core/keys.ts';
import {
  OPERATION_PARTITIONS,
  OPERATION_QUEUE_PARTITIONS,
  OPERATION_REQUEST_PARTITIONS,
  isOperationPartition,
  isOperationQueuePartition,
  isOperationRequestPartition,
  operationKey,
  operationQueueKey,
  operationRequestKey,
  operationShard,
} from './keys.ts';
import { operationIdOf } from './operations.ts';

describe('the operation shards (docs/table.md#key-layout)', () => {
  it("take an id's shard from its first hex digit, modulo 4, for ever", () => {
    // Fixed values: a change would lose every operation item written before it.
    expect(OPERATION_SHARDS).toBe(4);
    expect(['0', '3', '4', '7', '9', 'a', 'b', 'f'].map((digit) => operationShard(`${digit}${'0'.repeat(31)}`))).toEqual([0, 3, 0, 3, 1, 2, 3, 3]);
    // Not an id (never stored): a shard all the same, where nothing has its key.
    expect(operationShard('')).toBe(0);
    expect(operationShard('../etc')).toBe(0);
  });

  it('keep an operation and its large request in the shard of its id, spread ids over every shard, and queue entries in the queue\'s one partition', () => {
    const id = `b${'1'.repeat(31)}`;
    expect(operationKey(id)).toEqual({ pk: 'OPERATION#3', sk: id });
    expect(operationRequestKey(id, 'h1')).toEqual({ pk: 'OPREQUEST#3', sk: `${id}#h1` });
    expect(OPERATION_QUEUE_SHARDS).toBe(1);
    expect(operationQueueKey(id)).toEqual({ pk: 'OPQUEUE#0', sk: id });
    const ids = Array.from({ length: 1000 }, (_, i) => operationIdOf('prod', 'oidc:alice', `key-${i}`));
    const perShard = new Map<string, number>();
    for (const pk of ids.map((i) => operationKey(i).pk)) perShard.set(pk, (perShard.get(pk) ?? 0) + 1);
    expect([...perShard.keys()].sort()).toEqual([...OPERATION_PARTITIONS]);
    for (const n of perShard.values()) expect(n).toBeLessThan(1.2 * (ids.length / OPERATION_SHARDS));
    expect(new Set(ids.map((i) => operationQueueKey(i).pk))).toEqual(new Set(OPERATION_QUEUE_PARTITIONS));
  });

  it('tell the partitions of each kind from every other', () => {
    expect(OPERATION_PARTITIONS.every(isOperationPartition)).toBe(true);
    expect(OPERATION_REQUEST_PARTITIONS.every(isOperationRequestPartition)).toBe(true);
    expect(OPERATION_QUEUE_PARTITIONS.every(isOperationQueuePartition)).toBe(true);
    for (const other of ['OPERATION', 'OPQUEUE', 'OPREQUEST', 'OPERATION#4', 'OPQUEUE#', 'OPACCOUNT#prod', undefined, 0]) {
      expect(isOperationPartition(other)).toBe(false);
      expect(isOperationRequestPartition(other)).toBe(false);
      expect(isOperationQueuePartition(other)).toBe(false);
    }
    expect(isOperationPartition('OPQUEUE#0')).toBe(false);
    expect(isOperationQueuePartition('OPERATION#0')).toBe(false);
  });
});
