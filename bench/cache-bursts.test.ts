import { describe, expect, it } from 'vitest';
import { burstFigure, medianOf } from './cache-bursts.ts';

describe('the watch figure of bench:cache', () => {
  it('is the median of the rounds\' ratios, so one slow burst on either side does not decide it', () => {
    const f = burstFigure([
      { informers: 10_000, agent: 11_000 },
      { informers: 6_000, agent: 11_500 }, // the informers' burst hit a slow moment
      { informers: 10_500, agent: 11_550 },
    ]);
    expect(f.ratios.map((r) => Math.round(r * 100) / 100)).toEqual([1.1, 1.92, 1.1]);
    expect(f.median).toBeCloseTo(1.1, 5);
    expect(f.spread[0]).toBeCloseTo(1.1, 5);
    expect(f.spread[1]).toBeCloseTo(1.9167, 3);
    expect(f.agentPerS).toBe(11_500);
    expect(f.informersPerS).toBe(10_000);
  });

  it('takes the mean of the middle two for an even count, and refuses an empty list', () => {
    expect(medianOf([4, 1, 3, 2])).toBe(2.5);
    expect(medianOf([7])).toBe(7);
    expect(() => medianOf([])).toThrow();
  });
});
