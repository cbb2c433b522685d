import { describe, expect, it } from 'vitest';
import { isUsageError } from './errors.ts';
import { documentsOf } from './input.ts';

/** Each level refers to the one before ten times: 10^4 copies of the first from a few hundred bytes. */
const ALIAS_BOMB = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]', ...[1, 2, 3, 4].map((i) => `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`)].join('\n');

function usageMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(isUsageError(e)).toBe(true);
    return (e as Error).message;
  }
  throw new Error('no usage error');
}

describe('documentsOf', () => {
  it('reads every document, leaving empty ones out', () => {
    expect(documentsOf('name: a\n---\n---\n[{name: b}]\n', 'f.yml')).toEqual([{ name: 'a' }, [{ name: 'b' }]]);
  });

  it('gives a usage error, not a crash, for YAML that parses but cannot be read, and quotes nothing of it', () => {
    expect(usageMessage(() => documentsOf('name: a\n---\nname: *TOKEN123\n', 'f.yml'))).toBe('f.yml: document 2 cannot be read: an alias names no anchor set before it');
    expect(usageMessage(() => documentsOf(ALIAS_BOMB, 'f.yml'))).toBe('f.yml: document 1 cannot be read: its aliases expand to more than 100 nodes');
    expect(usageMessage(() => documentsOf('name: [', 'f.yml'))).toMatch(/^f\.yml is not valid YAML or JSON/);
  });
});
