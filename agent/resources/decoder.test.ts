import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processSemiSpaceMb } from './decoder.ts';

describe('the young generation of decoding threads', () => {
  it('reads the semi-space the process was started with, from its arguments or NODE_OPTIONS', () => {
    expect(processSemiSpaceMb(['--max-semi-space-size=2'], '')).toBe(2);
    expect(processSemiSpaceMb([], '--enable-source-maps --max_semi_space_size=8')).toBe(8);
    expect(processSemiSpaceMb(['--max-semi-space-size', '4'], '')).toBe(4);
    expect(processSemiSpaceMb(['--expose-gc'], '')).toBeUndefined();
  });

  it('is large in a decoding thread while the main thread keeps the 2 MiB semi-space it was started with', () => {
    const script = fileURLToPath(new URL('./testdata/young-generation.ts', import.meta.url));
    const out = JSON.parse(execFileSync(process.execPath, ['--max-semi-space-size=2', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })) as { thread: number; main: number };
    // New space is two semi-spaces: 4 MiB at 2 MiB each, read as up to 7 MiB now and then (pages of the
    // previous scavenge not yet given back); 128 MiB here without the flag, and a decoding thread grows
    // to 2 × 16 MiB: at most four semi-spaces of 2 MiB still tells the main thread's apart from both.
    expect(out.main).toBeLessThanOrEqual(8);
    expect(out.thread).toBeGreaterThanOrEqual(16);
  });
});
