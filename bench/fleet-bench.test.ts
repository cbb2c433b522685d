import { describe, expect, it } from 'vitest';
import { activePercentiles, fewestMovesToEven, perAccount, perAccountByProcess, zoneSpread } from './fleet-bench.ts';

// The pure parts of bench:fleet: how a zone's spread is judged, the moves an even spread needs, and
// table requests per account. The run itself needs processes of its own (npm run bench:fleet).
describe('bench:fleet', () => {
  it('judges a zone even only when every agent caches floor(M/N) or ceil(M/N) and no role is on an agent gone', () => {
    expect(zoneSpread('z', ['a', 'b', 'a', 'c', 'b'], ['a', 'b', 'c'])).toEqual({ zone: 'z', accounts: 5, agents: 3, min: 1, max: 2, even: true });
    expect(zoneSpread('z', ['a', 'a', 'a', 'b'], ['a', 'b', 'c'])).toMatchObject({ min: 0, max: 3, even: false });
    expect(zoneSpread('z', ['a', 'gone'], ['a', 'b'])).toMatchObject({ min: 0, max: 1, even: false });
    expect(zoneSpread('z', ['a', undefined], ['a', 'b'])).toMatchObject({ even: false });
  });

  it('counts the fewest moves to an even spread', () => {
    expect(fewestMovesToEven([37, 36, 0])).toBe(24);
    expect(fewestMovesToEven([10, 0, 0])).toBe(6);
    expect(fewestMovesToEven([4, 3, 3])).toBe(0);
    expect(fewestMovesToEven([])).toBe(0);
  });

  it('divides the table requests made between two counts by the accounts', () => {
    expect(perAccount({ UpdateItem: 10, Query: 5 }, { UpdateItem: 30, Query: 5, GetItem: 4 }, 10)).toEqual({ UpdateItem: 2, GetItem: 0.4 });
  });

  it('divides them by the process that sent them, leaving out a process that sent nothing in between', () => {
    const before = { counts: {}, byProcess: { api: { UpdateItem: 10 }, driver_0: { Query: 4 } } };
    const after = { counts: {}, byProcess: { api: { UpdateItem: 30 }, driver_0: { Query: 4 }, driver_1: { BatchGetItem: 5 } } };
    expect(perAccountByProcess(before, after, 10)).toEqual({ api: { UpdateItem: 2 }, driver_1: { BatchGetItem: 0.5 } });
  });

  it('says when shares of the accounts were ACTIVE, and null for a share never reached', () => {
    const times = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(activePercentiles(times, 100)).toEqual({ p50: 50, p90: 90, p99: 99, all: 100 });
    expect(activePercentiles(times.slice(0, 95), 100)).toEqual({ p50: 55, p90: 95, p99: null, all: null });
  });
});
