import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// Runs `npm run bench:cache` small, to keep it working; only machine-independent figures are asserted.
describe('bench:cache', () => {
  it('prints every figure beside its baseline', async () => {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['bench/cache.ts'], { env: { ...process.env, BENCH_OBJECTS: '300', BENCH_NAMESPACES: '3', BENCH_EVENTS: '400' }, stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        process.stderr.write(d);
      });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`bench:cache exited with ${code}`))));
    });
    const figures = new Map(out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).map((f) => [f.figure, f]));
    expect([...figures.keys()]).toEqual([
      'seeded', 'initial_sync', 'peak_rss', 'settled_rss', 'bytes_to_driver_initial_sync', 'bytes_to_driver_per_event',
      'watch_events_into_driver', 'api_server_ceiling', 'table_writes', 'wcu_per_changed_object', 'agent_cpu',
    ]);
    // Every seeded object (and the default/kubernetes service) is written once, at one write unit each.
    expect(figures.get('initial_sync')).toMatchObject({ baseline_objects: 301, table_writes: 301 });
    expect(figures.get('initial_sync')!.table_wcu as number).toBeLessThan(301 * 1.1);
    expect(figures.get('bytes_to_driver_initial_sync')!.per_object_bytes as number).toBeLessThan(1000);
    expect(figures.get('wcu_per_changed_object')!.value as number).toBeLessThanOrEqual(1.05);
    for (const name of ['initial_sync', 'peak_rss', 'settled_rss', 'watch_events_into_driver']) expect(figures.get(name)!.baseline).toBeGreaterThan(0);
    expect(figures.get('api_server_ceiling')!.value as number).toBeGreaterThan(0);
    // Watch throughput is judged as a ratio to the informers on the same burst; the rates are beside it.
    const events = figures.get('watch_events_into_driver')!;
    expect(events).toMatchObject({ unit: 'x the informers', target: '>= 1.0 x the informers' });
    expect(events.ratio_to_ceiling as number).toBeGreaterThan(0);
    // Several bursts each, alternating (one pair per round), judged by the median of the rounds' ratios.
    const bursts = events.bursts as { informers: number; agent: number }[];
    const ratios = events.ratios as number[];
    expect(events.rounds).toBe(3);
    expect(bursts).toHaveLength(3);
    for (const b of bursts) expect(Math.min(b.informers, b.agent)).toBeGreaterThan(0);
    bursts.forEach((b, i) => expect(ratios[i]).toBeCloseTo(b.agent / b.informers, 1));
    expect(events.value as number).toBeCloseTo([...ratios].sort((a, b) => a - b)[1]!, 2);
    expect(events.spread).toEqual([Math.min(...ratios), Math.max(...ratios)]);
    expect(events.relists_during_burst).toBe(0);
    // Per process and per thread of the agent, the CPU of the bursts; the agent's collections per 1,000 events.
    expect(Object.keys(events.cpu_us_per_event as object)).toEqual(['api_server', 'agent', 'driver', 'table']);
    expect(Object.keys(events.baseline_cpu_us_per_event as object)).toEqual(['api_server', 'informers']);
    expect(events.agent_collections_per_1000_events).toEqual({ scavenges: expect.any(Number), mark_compacts: expect.any(Number) });
    // Every round's burst reaches the table: three bursts' changes, each written at most once.
    expect(figures.get('wcu_per_changed_object')).toMatchObject({ changes: 1200 });
  }, 180_000);
});
