import { describe, expect, it } from 'vitest';
import { PK, PK_PREFIX } from './keys.ts';

describe('the partitions of the table', () => {
  const words: string[] = Object.values(PK);
  const prefixes: string[] = Object.values(PK_PREFIX);

  it('gives every fixed partition a word of its own', () => {
    expect(new Set(words).size).toBe(words.length);
  });

  it('keeps prefixed partitions apart from each other and from every fixed word', () => {
    for (const prefix of prefixes) {
      expect(prefix.endsWith('#')).toBe(true);
      expect(prefixes.filter((other) => other.startsWith(prefix))).toEqual([prefix]);
      expect(words.filter((word) => word.startsWith(prefix))).toEqual([]);
    }
  });
});
