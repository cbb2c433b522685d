import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { silentLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import { DEFAULT_RETRY_SETTINGS, connectCluster, type ClusterClient } from '../clusters/index.ts';
import { ListGate } from './list-gate.ts';
import { DEFAULT_TIMING, Reflector, type ChangeSink, type WatchListSupport } from './reflector.ts';
import type { ResourceType } from './types.ts';

const type = (kind: string, plural: string): ResourceType => ({ group: '', version: 'v1', kind, plural, singular: kind.toLowerCase(), namespaced: true, verbs: ['list', 'watch'] });
const CONFIG_MAPS = type('ConfigMap', 'configmaps');
const SECRETS = type('Secret', 'secrets');

/** A sink whose driver does not take the batches holding the sync of `stuck` (a busy driver) until `released`. */
function sinkStuckOn(stuck: string, released: AbortSignal): ChangeSink & { synced: Set<string> } {
  const synced = new Set<string>();
  return {
    synced,
    change: () => undefined,
    sync: (scope) => {
      synced.add(scope.kind);
      return scope.kind === stuck ? new Promise<void>((r) => released.addEventListener('abort', () => r(), { once: true })) : undefined;
    },
    progress: () => undefined,
  };
}

describe('lists, the list gate and what watching means', () => {
  const dir = mkdtempSync(join(tmpdir(), 'list-slot-'));
  let kube: TestApiServer;
  let cluster: ClusterClient;
  let stop: AbortController;
  const running: Promise<void>[] = [];

  beforeAll(async () => {
    kube = await startTestApiServer({ tls: true });
    kube.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: '1' } });
    kube.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' }, data: { a: 'MQ==' } });
    const path = join(dir, 'kubeconfig');
    kube.writeKubeconfig(path);
    cluster = await connectCluster(
      { account: 'a', kubeConfigFile: path, context: '', serviceAccount: false, insecure: false, noProxy: true, oAuthScopes: [] },
      { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: true, retries: DEFAULT_RETRY_SETTINGS, clock: systemClock, logger: silentLogger() },
    );
  });
  afterEach(async () => {
    stop.abort();
    await Promise.allSettled(running.splice(0));
  });
  afterAll(async () => {
    cluster.close();
    await kube.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a WatchList is listing, not watching, until its initial events are complete', async () => {
    stop = new AbortController();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    let changes = 0;
    const sink: ChangeSink = {
      // The driver takes nothing until released: the initial events stop at the first object.
      change: () => (++changes === 1 ? held : undefined),
      sync: () => undefined,
      progress: () => undefined,
    };
    const deps = { cluster, clock: systemClock, random: () => 0.5, lists: new ListGate(1), sink, log: silentLogger(), watchList: { supported: true }, timing: DEFAULT_TIMING };
    const reflector = new Reflector({ type: CONFIG_MAPS, namespace: '' }, deps);
    running.push(reflector.run(stop.signal));
    await expect.poll(() => changes, { timeout: 10_000 }).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(reflector.state.watching).toBe(false);
    release();
    await expect.poll(() => reflector.state.watching, { timeout: 10_000 }).toBe(true);
    expect(reflector.resourceVersion).toBeDefined();
  });

  for (const watchList of [true, false]) {
    it(`${watchList ? 'WatchList' : 'paged list'}: with one slot, a second scope lists and watches while the first waits for the driver`, async () => {
      stop = new AbortController();
      const gate = new ListGate(1);
      const sink = sinkStuckOn('ConfigMap', stop.signal);
      const support: WatchListSupport = { supported: watchList };
      const deps = { cluster, clock: systemClock, random: () => 0.5, lists: gate, sink, log: silentLogger(), watchList: support, timing: DEFAULT_TIMING };
      const first = new Reflector({ type: CONFIG_MAPS, namespace: '' }, deps);
      running.push(first.run(stop.signal));
      await expect.poll(() => sink.synced.has('ConfigMap'), { timeout: 10_000 }).toBe(true);
      const second = new Reflector({ type: SECRETS, namespace: '' }, deps);
      running.push(second.run(stop.signal));
      await expect.poll(() => sink.synced.has('Secret') && second.state.watching, { timeout: 10_000 }).toBe(true);
      expect(second.state.objects).toBe(1);
      expect(gate.running).toBe(0);
    });
  }
});
