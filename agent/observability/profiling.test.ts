import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { heap } from '@datadog/pprof';
import { Profile } from 'pprof-format';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { get } from '../../test/support/http.ts';
import type { RunningHttpServer } from './http-server.ts';
import { startProfilingServer } from './profiling.ts';

let server: RunningHttpServer | undefined;
let clock: ManualClock;
let logged: Record<string, unknown>[];

beforeEach(async () => {
  clock = new ManualClock(Date.parse('2026-01-02T03:04:05Z'));
  const capture = captureLogger();
  logged = capture.lines;
  server = await startProfilingServer({ port: 0, clock, logger: capture.log });
});
afterEach(async () => {
  await server?.close();
});
const url = () => server!.url;

/** Lets the profile request reach its wait, then moves the clock past it. */
async function finishWait(ms: number, meanwhile: () => void = () => {}): Promise<void> {
  while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
  meanwhile();
  await clock.advance(ms);
}

/** Work the CPU profile should show under this name. */
function spinForTheProfiler(): number {
  let x = 0;
  const until = performance.now() + 200;
  while (performance.now() < until) for (let i = 0; i < 10_000; i++) x += Math.sqrt(i);
  return x;
}

/** A gzipped pprof protobuf, decoded, with its sample types and function names as text. */
function decoded(body: Buffer): { types: string[]; samples: number; functions: string[] } {
  expect([...body.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  const profile = Profile.decode(gunzipSync(body));
  const text = (i: number | bigint) => String(profile.stringTable.strings[Number(i)]);
  return {
    types: profile.sampleType.map((t) => `${text(t.type)}/${text(t.unit)}`),
    samples: profile.sample.length,
    functions: profile.function.map((f) => text(f.name)),
  };
}

async function getBinary(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const res = await fetch(`${url()}${path}`);
  return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
}

describe('profiling endpoint', () => {
  it("takes a CPU profile over the asked seconds in pprof's format, gzipped protobuf as Go serves it", async () => {
    const answer = getBinary('/debug/pprof/profile?seconds=3');
    await finishWait(3000, spinForTheProfiler);
    const { status, headers, body } = await answer;
    expect(status).toBe(200);
    expect(headers['content-type']).toBe('application/octet-stream');
    expect(headers['content-disposition']).toBe('attachment; filename="vendor-agent-2026-01-02T03-04-05-000Z.cpu.pb.gz"');
    const profile = decoded(body);
    expect(profile.types).toEqual(['sample/count', 'wall/nanoseconds']);
    expect(profile.samples).toBeGreaterThan(0);
    expect(profile.functions).toContain('spinForTheProfiler');
  });

  it("answers a heap profile at once in pprof's format: the sampled allocations still live", async () => {
    const kept = Array.from({ length: 64 }, (_, i) => Buffer.alloc(64 * 1024, i).toString('latin1') + String(i));
    const { status, headers, body } = await getBinary('/debug/pprof/heap');
    expect(status).toBe(200);
    expect(headers['content-disposition']).toMatch(/\.heap\.pb\.gz"$/);
    const profile = decoded(body);
    expect(profile.types).toEqual(['inuse_objects/count', 'inuse_space/bytes']);
    expect(profile.samples).toBeGreaterThan(0);
    expect(kept.length).toBe(64);
  });

  it('takes a CPU profile in the .cpuprofile format at /debug/pprof/v8/profile', async () => {
    const answer = get(`${url()}/debug/pprof/v8/profile?seconds=3`);
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

  it('gives the same heap samples in the .heapprofile format at /debug/pprof/v8/heap', async () => {
    const kept = Array.from({ length: 64 }, (_, i) => Buffer.alloc(64 * 1024, i).toString('latin1') + String(i));
    const { status, headers, text } = await get(`${url()}/debug/pprof/v8/heap`);
    expect(status).toBe(200);
    expect(headers['content-disposition']).toMatch(/\.heapprofile"$/);
    type Node = { callFrame: { functionName: string }; selfSize: number; id: number; children: Node[] };
    const profile = JSON.parse(text) as { head: Node; samples: unknown[] };
    expect(profile.head.callFrame.functionName).toBe('(root)');
    const total = (n: Node): number => n.selfSize + n.children.reduce((s, c) => s + total(c), 0);
    expect(total(profile.head)).toBeGreaterThan(0);
    expect(Array.isArray(profile.samples)).toBe(true);
    expect(kept.length).toBe(64);
  });

  it('streams a full heap snapshot, in the .heapsnapshot format', async () => {
    const { status, headers, text } = await get(`${url()}/debug/pprof/heapsnapshot`);
    expect(status).toBe(200);
    expect(headers['content-disposition']).toMatch(/\.heapsnapshot"$/);
    const snapshot = JSON.parse(text) as { snapshot: { meta: { node_fields: string[] }; node_count: number }; strings: string[] };
    expect(snapshot.snapshot.meta.node_fields).toContain('name');
    expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);
  });

  it('runs one CPU profile at a time; the heap profile still answers meanwhile', async () => {
    const first = getBinary('/debug/pprof/profile?seconds=1');
    while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
    expect((await get(`${url()}/debug/pprof/v8/profile?seconds=1`)).status).toBe(409);
    expect((await getBinary('/debug/pprof/heap')).status).toBe(200);
    await clock.advance(1000);
    expect((await first).status).toBe(200);
  });

  it('stops the profiler when the client goes away, and is free for the next profile', async () => {
    const req = request(`${url()}/debug/pprof/profile?seconds=100`);
    req.on('error', () => {});
    req.end();
    while (clock.pendingSleeps === 0) await new Promise((r) => setTimeout(r, 5));
    req.destroy();
    while (!logged.some((l) => l.msg === 'profile abandoned: client went away')) await new Promise((r) => setTimeout(r, 5));
    expect(clock.pendingSleeps).toBe(0);
    const next = getBinary('/debug/pprof/profile?seconds=1');
    await finishWait(1000);
    expect((await next).status).toBe(200);
  });

  it('refuses a bad seconds value, seconds on the heap profile and unknown paths, and lists what it serves', async () => {
    for (const path of ['/debug/pprof/profile', '/debug/pprof/v8/profile']) {
      for (const bad of ['0', '601', '1.5', 'x']) {
        const answer = await get(`${url()}${path}?seconds=${bad}`);
        expect(answer.status).toBe(400);
        expect(answer.text).toContain('seconds must be an integer from 1 to 600');
      }
    }
    const heapWithSeconds = await get(`${url()}/debug/pprof/heap?seconds=10`);
    expect(heapWithSeconds.status).toBe(400);
    expect(heapWithSeconds.text).toContain('the heap profile is taken at once');
    expect((await get(`${url()}/debug/pprof/goroutine`)).status).toBe(404);
    const index = await get(`${url()}/debug/pprof/`);
    expect(index.text).toContain('go tool pprof http://127.0.0.1:<port>/debug/pprof/profile?seconds=10');
    expect(index.text).toContain('/debug/pprof/v8/profile?seconds=30');
  });

  it('runs the sampling heap profiler while an endpoint is open, and stops it with the last one', async () => {
    const second = await startProfilingServer({ port: 0, clock, logger: captureLogger().log });
    await server!.close();
    server = undefined;
    expect(() => heap.profile()).not.toThrow();
    await second.close();
    expect(() => heap.profile()).toThrow();
  });
});
