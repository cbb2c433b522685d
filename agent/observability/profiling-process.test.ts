/**
 * The profiling endpoint of a running agent (`node agent/main.ts`, as its container runs it): the
 * profiles `go tool pprof` reads, fetched over HTTP and decoded with pprof's protobuf schema.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startChild, type Child } from '../../test/support/process.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let agent: Child;
let pprofUrl: string;
let healthUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agent-pprof-'));
  const config = join(dir, 'vendor-agent.yml');
  // No driver answers at this address: the agent runs, not ready, and serves its profiles all the same.
  writeFileSync(
    config,
    stringify({
      driver: { grpc: '127.0.0.1:1', insecure: true },
      server: { host: '127.0.0.1', port: 0 },
      pprof: { enabled: true, port: 0 },
      logging: { format: 'json' },
    }),
  );
  agent = startChild(process.execPath, ['agent/main.ts', '--config', config], { cwd: root, env: { ...process.env, VENDOR_AGENT_ID: 'pprof-agent' } });
  const urlOf = async (msg: string) => (JSON.parse(await agent.line((l) => l.includes(`"msg":"${msg}"`))) as { url: string }).url;
  pprofUrl = await urlOf('profiling server listening');
  healthUrl = await urlOf('health server listening');
}, 60_000);

afterAll(async () => {
  agent?.process.kill('SIGTERM');
  await agent?.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function profileAt(path: string): Promise<Profile> {
  const res = await fetch(`${pprofUrl}${path}`);
  expect(res.status, await res.clone().text().catch(() => '')).toBe(200);
  return Profile.decode(gunzipSync(Buffer.from(await res.arrayBuffer())));
}

const sampleTypes = (p: Profile) => p.sampleType.map((t) => `${p.stringTable.strings[Number(t.type)]}/${p.stringTable.strings[Number(t.unit)]}`);
const files = (p: Profile) => p.function.map((f) => String(p.stringTable.strings[Number(f.filename)]));

describe('the profiling endpoint of a running agent', () => {
  it('listens on loopback only', () => {
    expect(new URL(pprofUrl).hostname).toBe('127.0.0.1');
  });

  it("serves a CPU profile in pprof format, with samples of the agent's own code at work", async () => {
    const answer = profileAt('/debug/pprof/profile?seconds=2');
    let done = false;
    void answer.finally(() => (done = true)).catch(() => {});
    // An idle agent leaves an empty profile: keep its health server busy while the profile runs.
    for (let i = 0; i < 20_000 && !done; i++) await (await fetch(`${healthUrl}/readyz`)).text();
    const profile = await answer;
    expect(sampleTypes(profile)).toEqual(['sample/count', 'wall/nanoseconds']);
    expect(profile.sample.length).toBeGreaterThan(0);
    expect(Number(profile.durationNanos)).toBeGreaterThan(0);
    expect(files(profile).some((f) => f.includes('/agent/'))).toBe(true);
  }, 30_000);

  it("serves a heap profile in pprof format, with the agent's own code among the allocating frames", async () => {
    const profile = await profileAt('/debug/pprof/heap');
    expect(sampleTypes(profile)).toEqual(['inuse_objects/count', 'inuse_space/bytes']);
    expect(profile.sample.length).toBeGreaterThan(0);
    expect(files(profile).some((f) => f.includes('/agent/'))).toBe(true);
  }, 30_000);
});
