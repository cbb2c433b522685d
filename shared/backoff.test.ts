import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, type BackoffPolicy } from './backoff.ts';

const noDraw = () => {
  throw new Error('a wait without jitter must not draw');
};

const policies = fc
  .record({
    baseMs: fc.integer({ min: 0, max: 100_000 }),
    maxMs: fc.integer({ min: 0, max: 1_000_000 }),
    factor: fc.double({ min: 1, max: 4, noNaN: true }),
    maxSteps: fc.integer({ min: 0, max: 30 }),
    low: fc.double({ min: 0, max: 1.5, noNaN: true }),
    width: fc.double({ min: 0, max: 1.5, noNaN: true }),
  })
  .map(({ low, width, ...p }): BackoffPolicy => ({ ...p, jitter: [low, low + width] }));
const draws = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

/** The wait before jitter, as the policy's documentation states it. */
const grown = (p: BackoffPolicy, failures: number) => Math.min(p.maxMs, p.baseMs * (p.factor ?? 2) ** Math.min(failures - 1, p.maxSteps ?? 30));

describe('backoffDelay', () => {
  it('stays within the jitter range of the grown wait, and never past the cap times the top of the range', () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 1, max: 200 }), draws, (p, failures, r) => {
        const [low, high] = p.jitter ?? [1, 1];
        const wait = backoffDelay(p, failures, () => r);
        const g = grown(p, failures);
        expect(wait).toBeGreaterThanOrEqual(g * low - 1e-9 * g);
        expect(wait).toBeLessThanOrEqual(g * high + 1e-9 * g);
        expect(wait).toBeLessThanOrEqual(p.maxMs * high + 1e-9 * p.maxMs);
      }),
    );
  });

  it('never shrinks while failures go on, for the same draw', () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 1, max: 60 }), draws, (p, failures, r) => {
        expect(backoffDelay(p, failures + 1, () => r)).toBeGreaterThanOrEqual(backoffDelay(p, failures, () => r));
      }),
    );
  });

  it('grows by the factor until the step limit or the cap, and draws nothing without jitter', () => {
    const p: BackoffPolicy = { baseMs: 100, maxMs: 10_000, factor: 3, maxSteps: 3 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(p, n, noDraw))).toEqual([100, 300, 900, 2_700, 2_700, 2_700]);
    expect([1, 2, 3].map((n) => backoffDelay({ ...p, maxMs: 500 }, n, noDraw))).toEqual([100, 300, 500]);
    // Doubling and 30 steps unless told otherwise.
    expect(backoffDelay({ baseMs: 1, maxMs: Infinity }, 40, noDraw)).toBe(2 ** 30);
  });

  it('spreads the wait over the jitter range and rounds when asked', () => {
    const p: BackoffPolicy = { baseMs: 1_000, maxMs: 1_000, jitter: [0.5, 1.5], round: true };
    expect(backoffDelay(p, 1, () => 0)).toBe(500);
    expect(backoffDelay(p, 1, () => 0.5)).toBe(1_000);
    expect(backoffDelay(p, 1, () => 0.999_9)).toBe(1_500);
    expect(backoffDelay({ ...p, round: false }, 1, () => 0.333)).toBeCloseTo(833, 9);
  });

  it('keeps the numbers each loop had before it used this rule', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), draws, fc.integer({ min: 1, max: 10_000 }), (n, r, base) => {
        // The driver's table loops: exactly ms / 2 + r * ms / 2.
        const ms = Math.min(5_000, base * 2 ** Math.min(n - 1, 30));
        expect(backoffDelay({ baseMs: base, maxMs: 5_000, jitter: [0.5, 1] }, n, () => r)).toBe(ms / 2 + (r * ms) / 2);
        // The cache's reflectors and discovery: round(min(max, initial * 2^min(n - 1, 20)) * (0.5 + r)).
        const cache = Math.min(60_000, base * 2 ** Math.min(n - 1, 20));
        expect(Math.abs(backoffDelay({ baseMs: base, maxMs: 60_000, maxSteps: 20, jitter: [0.5, 1.5], round: true }, n, () => r) - cache * (0.5 + r))).toBeLessThanOrEqual(0.5 + 1e-9);
        // The resource writer: min(30 s, retryMs * 2^min(n - 1, 10)), no jitter.
        expect(backoffDelay({ baseMs: base, maxMs: 30_000, maxSteps: 10 }, n, noDraw)).toBe(Math.min(30_000, base * 2 ** Math.min(n - 1, 10)));
        // The source lock, attempt n - 1: min(500, 10 * 2^min(attempt, 6)) * (0.5 + r / 2).
        expect(backoffDelay({ baseMs: 10, maxMs: 500, maxSteps: 6, jitter: [0.5, 1] }, n, () => r)).toBeCloseTo(Math.min(500, 10 * 2 ** Math.min(n - 1, 6)) * (0.5 + r / 2), 9);
        // The rank index, attempt n - 1: r * min(50, 2 * 2^min(attempt, 5)).
        expect(backoffDelay({ baseMs: 2, maxMs: 50, maxSteps: 5, jitter: [0, 1] }, n, () => r)).toBe(r * Math.min(50, 2 * 2 ** Math.min(n - 1, 5)));
      }),
    );
    // Unprocessed batch items, attempt 1 to 8: 10 * 2^attempt.
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => backoffDelay({ baseMs: 20, maxMs: Infinity }, attempt, noDraw))).toEqual([20, 40, 80, 160, 320, 640, 1_280, 2_560]);
  });
});

describe('Backoff', () => {
  it('counts failures in a row, answers the growing wait, and starts over after a success', () => {
    const draws: number[] = [];
    const backoff = new Backoff({ baseMs: 100, maxMs: 1_000, jitter: [0.5, 1] }, () => {
      draws.push(0);
      return 0;
    });
    expect(backoff.failures).toBe(0);
    expect([1, 2, 3, 4, 5].map(() => backoff.failed())).toEqual([50, 100, 200, 400, 500]);
    expect(backoff.failures).toBe(5);
    expect(draws).toHaveLength(5);
    backoff.succeeded();
    expect(backoff.failures).toBe(0);
    expect(backoff.failed()).toBe(50);
  });
});
