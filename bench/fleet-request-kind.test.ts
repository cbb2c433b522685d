import { describe, expect, it } from 'vitest';
import { requestKind } from './fleet-request-kind.ts';

describe('bench:fleet request kinds', () => {
  it('names a request by its operation and the partitions of its keys', () => {
    expect(requestKind('Query', JSON.stringify({ ExpressionAttributeValues: { ':pk': { S: 'CHANGE#6' }, ':cursor': { S: '0' } } }))).toBe('Query CHANGE#');
    expect(requestKind('UpdateItem', JSON.stringify({ Key: { pk: { S: 'ACCOUNT#4' }, sk: { S: 'a' } } }))).toBe('UpdateItem ACCOUNT#');
    const writes = [{ PutRequest: { Item: { pk: { S: 'HELD#a1' } } } }, { DeleteRequest: { Key: { pk: { S: 'CHANGE#1' } } } }, { PutRequest: { Item: { pk: { S: 'HELD#a2' } } } }];
    expect(requestKind('BatchWriteItem', JSON.stringify({ RequestItems: { t: writes } }))).toBe('BatchWriteItem CHANGE#+HELD#');
    expect(requestKind('BatchGetItem', JSON.stringify({ RequestItems: { t: { Keys: Array.from({ length: 30 }, () => ({})) } } }))).toBe('BatchGetItem 11-50 keys');
    expect(requestKind('Query', 'not json')).toBeUndefined();
  });
});
