import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Runs `node bench/cache-decode.ts` small, to keep it working; only machine-independent figures are asserted.
describe('bench/cache-decode.ts', () => {
  it('prints the CPU per event of each decoding step beside its ratio to the parse', () => {
    const out = execFileSync(process.execPath, ['bench/cache-decode.ts'], { encoding: 'utf8', env: { ...process.env, BENCH_OBJECTS: '300', BENCH_EVENTS: '200', BENCH_ROUNDS: '3' } });
    const figures = new Map(out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).map((f) => [f.figure, f]));
    expect([...figures.keys()]).toEqual(['burst', 'json_parse_cpu_per_event', 'compact_cpu_per_event', 'decode_cpu_per_event', 'handoff_cpu_per_event']);
    expect(figures.get('burst')).toMatchObject({ value: 200, unit: 'events' });
    // Realistic pods: about 6 KB as served, under the compact form's 800-byte aim once compacted.
    expect(figures.get('burst')!.bytes_per_event as number).toBeGreaterThan(4000);
    expect(figures.get('burst')!.compact_bytes_per_event as number).toBeLessThanOrEqual(800);
    expect(figures.get('json_parse_cpu_per_event')!.ratio_to_parse).toBe(1);
    for (const name of ['compact_cpu_per_event', 'decode_cpu_per_event', 'handoff_cpu_per_event']) {
      expect(figures.get(name)).toMatchObject({ unit: 'µs CPU per event', rounds: 3 });
      expect(figures.get(name)!.value as number).toBeGreaterThanOrEqual(0);
    }
  }, 120_000);
});
