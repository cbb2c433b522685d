import { describe, expect, it } from 'vitest';
import { matchesAny } from './identity.ts';

describe('matchesAny', () => {
  it('matches exact names and * patterns, nothing else being special', () => {
    expect(matchesAny('prod-1', ['prod-1'])).toBe(true);
    expect(matchesAny('prod-12', ['prod-1'])).toBe(false);
    expect(matchesAny('prod-12', ['prod-*'])).toBe(true);
    expect(matchesAny('prod-', ['prod-*'])).toBe(true);
    expect(matchesAny('staging-1', ['prod-*'])).toBe(false);
    expect(matchesAny('anything', ['*'])).toBe(true);
    expect(matchesAny('a.b', ['a?b'])).toBe(false);
    expect(matchesAny('axb', ['a.b'])).toBe(false);
    expect(matchesAny('x_zone', ['*_zone', 'other'])).toBe(true);
    expect(matchesAny('x', [])).toBe(false);
  });
});
