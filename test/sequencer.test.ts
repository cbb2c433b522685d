import { describe, expect, it } from 'vitest';
import { crossComponentFirst } from './sequencer.ts';

describe('the order of a run without durations', () => {
  const item = (project: string, file: string) => ({ project, file });
  const order = (items: { project: string; file: string }[]) => crossComponentFirst(items, (i) => i.project, (i) => i.file).map((i) => `${i.project}:${i.file}`);

  it('puts the suites of test/ and bench/ before the unit tests, keeping vitest\'s order within each', () => {
    expect(order([item('p', 'shared/a.test.ts'), item('p', 'test/x.test.ts'), item('p', 'agent/b.test.ts'), item('p', 'bench/y.test.ts'), item('p', 'test/cluster/z.test.ts')])).toEqual([
      'p:test/x.test.ts',
      'p:bench/y.test.ts',
      'p:test/cluster/z.test.ts',
      'p:shared/a.test.ts',
      'p:agent/b.test.ts',
    ]);
  });

  it('keeps the projects in the order vitest gave them', () => {
    expect(order([item('own', 'functions/l.test.ts'), item('own', 'test/e.test.ts'), item('shared', 'cli/c.test.ts'), item('shared', 'test/t.test.ts')])).toEqual([
      'own:test/e.test.ts',
      'own:functions/l.test.ts',
      'shared:test/t.test.ts',
      'shared:cli/c.test.ts',
    ]);
  });

  it('does not take a folder whose name only begins like test/ for one', () => {
    expect(order([item('p', 'testing/a.test.ts'), item('p', 'test/b.test.ts')])).toEqual(['p:test/b.test.ts', 'p:testing/a.test.ts']);
  });
});
