import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { get } from '../../test/support/http.ts';
import type { RunningHttpServer } from './http-server.ts';
import { startProfilingServer } from './profiling.ts';

let server: RunningHttpServer;
let clock: ManualClock;
let logged: Record<string, unknown>[];

beforeEach(async () => {
  clock = new ManualClock(Date.parse('2026-01-02T03:04:05Z'));
  const capture = captureLogger();
  logged = capture.lines;
  server = await startProfilingServer({ port: 0, clock, logger: capture.log });
});
afterEach(async () => {
  await server.close();
});

/** Lets the profile request reach its wait, then moves the clock past it. */
async function finishWait(ms: number): Promise<void> {
  while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
  await clock.advance(ms);
}

describe('profiling endpoint', () => {
  it('takes a CPU profile over the asked seconds, in the .cpuprofile format', async () => {
    const answer = get(`${server.url}/debug/pprof/profile?seconds=3`);
    await finishWait(3000);
    const { status, headers, text } = await answer;
    expect(status).toBe(200);
    expect(headers['content-disposition']).toBe('attachment; filename="vendor-agent-2026-01-02T03-04-05-000Z.cpuprofile"');
    const profile = JSON.parse(text) as { nodes: { callFrame: { functionName: string } }[]; startTime: number; endTime: number; samples: number[] };
    expect(profile.nodes.length).toBeGreaterThan(0);
    expect(profile.nodes[0]!.callFrame.functionName).toBe('(root)');
    expect(profile.endTime).toBeGreaterThanOrEqual(profile.startTime);
    expect(Array.isArray(profile.samples)).toBe(true);
  });

  it('takes a sampling heap profile, in the .heapprofile format', async () => {
    const answer = get(`${server.url}/debug/pprof/heap?seconds=2`);
    await finishWait(2000);
    const { status, headers, text } = await answer;
    expect(status).toBe(200);
    expect(headers['content-disposition']).toMatch(/\.heapprofile"$/);
    const profile = JSON.parse(text) as { head: { callFrame: { functionName: string }; children: unknown[] }; samples: unknown[] };
    expect(profile.head.callFrame.functionName).toBe('(root)');
    expect(Array.isArray(profile.samples)).toBe(true);
  });

  it('streams a full heap snapshot, in the .heapsnapshot format', async () => {
    const { status, headers, text } = await get(`${server.url}/debug/pprof/heapsnapshot`);
    expect(status).toBe(200);
    expect(headers['content-disposition']).toMatch(/\.heapsnapshot"$/);
    const snapshot = JSON.parse(text) as { snapshot: { meta: { node_fields: string[] }; node_count: number }; strings: string[] };
    expect(snapshot.snapshot.meta.node_fields).toContain('name');
    expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);
  });

  it('runs one profile at a time', async () => {
    const first = get(`${server.url}/debug/pprof/profile?seconds=1`);
    while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
    const second = await get(`${server.url}/debug/pprof/heap?seconds=1`);
    expect(second.status).toBe(409);
    await clock.advance(1000);
    expect((await first).status).toBe(200);
  });

  it('stops the profiler when the client goes away, and is free for the next profile', async () => {
    const req = request(`${server.url}/debug/pprof/profile?seconds=100`);
    req.on('error', () => {});
    req.end();
    while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
    req.destroy();
    while (!logged.some((l) => l.msg === 'profile abandoned: client went away')) await new Promise((r) => setTimeout(r, 5));
    expect(clock.pendingSleeps).toBe(0);
    const next = get(`${server.url}/debug/pprof/heap?seconds=1`);
    await finishWait(1000);
    expect((await next).status).toBe(200);
  });

  it('refuses a bad seconds value and unknown paths, and lists what it serves', async () => {
    for (const bad of ['0', '601', '1.5', 'x']) {
      const answer = await get(`${server.url}/debug/pprof/profile?seconds=${bad}`);
      expect(answer.status).toBe(400);
      expect(answer.text).toContain('seconds must be an integer from 1 to 600');
    }
    expect((await get(`${server.url}/debug/pprof/goroutine`)).status).toBe(404);
    const index = await get(`${server.url}/debug/pprof/`);
    expect(index.text).toContain('/debug/pprof/profile?seconds=30');
  });
});
