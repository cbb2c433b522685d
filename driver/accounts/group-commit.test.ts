import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { GroupCommit } from './group-commit.ts';

describe('GroupCommit', () => {
  it('runs a lone caller at once and joins the callers that come meanwhile into the next run', async () => {
    const runs: number[][] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const commit = new GroupCommit<number>(async (items) => {
      runs.push([...items]);
      if (runs.length === 1) await gate;
    });
    const first = commit.add([1]);
    const later = [commit.add([2]), commit.add([3, 4])];
    expect(runs).toEqual([[1]]);
    release();
    await Promise.all([first, ...later]);
    expect(runs).toEqual([[1], [2, 3, 4]]);
  });

  it('with a linger, a run waits that long on the clock and takes every caller that came meanwhile', async () => {
    const clock = new ManualClock(0);
    const runs: number[][] = [];
    const commit = new GroupCommit<number>(async (items) => void runs.push([...items]), 500, { clock, ms: 50 });
    const first = commit.add([1]);
    await clock.advance(20);
    const second = commit.add([2, 3]);
    expect(runs).toEqual([]);
    await clock.advance(30);
    await Promise.all([first, second]);
    expect(runs).toEqual([[1, 2, 3]]);
  });

  it('fails only the callers of the run that failed, and keeps whole callers within maxItems', async () => {
    const runs: string[][] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const commit = new GroupCommit<string>(async (items) => {
      runs.push([...items]);
      if (runs.length === 1) await gate;
      if (items.includes('bad')) throw new Error('the table refused');
    }, 3);
    const first = commit.add(['a']);
    const bad = commit.add(['bad', 'b']);
    const big = commit.add(['c', 'd', 'e', 'f']);
    release();
    await first;
    await expect(bad).rejects.toThrow('the table refused');
    await big;
    expect(runs).toEqual([['a'], ['bad', 'b'], ['c', 'd', 'e', 'f']]);
  });
});
