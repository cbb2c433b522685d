/**
 * The reflector under faults, against the test API server: resume without lists, 410 and relists of
 * one kind, dropped and silent watches, the retry rules of `kubernetes.retries.*`, and a failing kind
 * that leaves the others current.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { deleteScopeProgress, putScopeProgress, scopeProgress, scopeProgressParams } from '../../shared/table/resources/scopes.ts';
import { SCOPES_SEEN_SK } from '../../shared/table/resources/keys.ts';
import { queryAll } from '../../shared/table/core/query.ts';
import { getCacheHealth } from '../../shared/table/resources/health.ts';
import { listResources, writeResources } from '../../shared/table/resources/objects.ts';
import { BUILT_IN_KINDS, CacheFixture, WAIT, configMap, listsOf, pod } from '../../test/resource-cache-harness.ts';
import { startTestApiServer } from '../../test/kube/index.ts';
import type { CacheAgent } from '../../test/resource-cache-harness.ts';

let f: CacheFixture;
afterEach(async () => {
  await f.close();
});

async function start(watchList = true): Promise<CacheFixture> {
  f = await new CacheFixture().start({ watchList });
  f.kube.store.ensureNamespace('shop');
  for (let i = 0; i < 20; i++) f.kube.store.create(configMap('shop', `cm-${i}`));
  for (let i = 0; i < 5; i++) f.kube.store.create(pod('shop', `pod-${i}`));
  return f;
}

async function converged(): Promise<void> {
  await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS)), WAIT);
}

/** Waits until the table holds where every running scope can resume. */
async function resumable(agent: CacheAgent): Promise<void> {
  await vi.waitFor(async () => {
    await f.written();
    expect((await scopeProgress(f.table, f.account)).length).toBe(agent.worker.run?.scopes().length);
  }, WAIT);
}

/**
 * Every scope has listed. Kinds with no objects converge (table and cluster both empty) before their
 * list may have run, so a test that clears the request log to count what comes after waits for this.
 */
async function allListed(agent: CacheAgent): Promise<void> {
  await vi.waitFor(() => {
    const status = agent.worker.run?.status();
    expect(status?.scopes).toBe(BUILT_IN_KINDS.length);
    expect(status?.synced).toBe(status?.scopes);
  }, WAIT);
}

/** An agent that cached everything and stopped with its progress in the table; the request log cleared. */
async function cachedThenStopped(): Promise<void> {
  const first = await f.agent();
  await converged();
  await resumable(first);
  await first.stop();
  f.kube.requests.clear();
}

async function kindHealth(kind: string) {
  return (await getCacheHealth(f.table, f.account))?.kinds.find((k) => k.kind === kind);
}

/** `/cache` shows no error for the kind any more, and still when it last failed. */
async function worksAgain(kind: string): Promise<void> {
  await vi.waitFor(async () => {
    const h = await kindHealth(kind);
    expect(h?.lastError).toBeUndefined();
    expect(h?.lastErrorAt).toBeTypeOf('number');
  }, WAIT);
}

describe('resume', () => {
  it('an agent restarted against an unchanged cluster resumes every watch without listing', async () => {
    await start();
    await cachedThenStopped();
    const second = await f.agent();
    await vi.waitFor(() => expect(second.worker.run?.scopes().length).toBe(BUILT_IN_KINDS.length), WAIT);
    await vi.waitFor(() => expect(f.kube.requests.count({ verb: 'watch' })).toBeGreaterThanOrEqual(BUILT_IN_KINDS.length), WAIT);
    expect(listsOf(f.kube)).toBe(0);
    // What changed while no agent ran arrives through the resumed watches.
    f.kube.store.create(configMap('shop', 'while-away'));
    await converged();
    expect(listsOf(f.kube)).toBe(0);
  });

  it('changes made while the agent was down arrive through the resumed watch, deletions too', async () => {
    await start();
    await cachedThenStopped();
    f.kube.store.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-1' });
    f.kube.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-2' }, { data: { a: 'changed' } });
    f.kube.store.create(pod('shop', 'new-pod'));
    await f.agent();
    await converged();
    expect(listsOf(f.kube)).toBe(0);
  });

  it('a new caching agent after a takeover resumes where the previous one stopped', async () => {
    await start();
    await cachedThenStopped();
    await f.setCaching('agent-2', 2);
    f.kube.store.create(configMap('shop', 'after-takeover'));
    await f.agent({ agentId: 'agent-2', epoch: 2 });
    await converged();
    expect(listsOf(f.kube)).toBe(0);
  });

  it('an account pointed at another cluster lists it instead of resuming from the first one\'s versions', async () => {
    await start();
    await cachedThenStopped();
    const other = await startTestApiServer({ tls: true, watchList: true });
    try {
      other.store.ensureNamespace('shop');
      // More changes than the first cluster had, so its versions are ahead of the stored ones too.
      for (let i = 0; i < 40; i++) other.store.create(configMap('shop', `other-${i}`));
      const agent = await f.agent({ kube: other });
      try {
        await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS, undefined, other)), WAIT);
        expect(listsOf(other)).toBe(BUILT_IN_KINDS.length);
      } finally {
        await agent.stop();
      }
    } finally {
      await other.close();
    }
  });

  it('a quiet cache keeps its progress recent with one seen item a report, and the next agent resumes from it', async () => {
    await start();
    // A report every few hundred ms instead of every minute: the quiet cache's periodic report.
    const first = await f.agent({ timing: { healthIntervalMs: 100, healthMaxAgeMs: 300 } });
    await converged();
    await resumable(first);
    await allListed(first);
    const raw = async () => (await queryAll(f.table, scopeProgressParams(f.table.tableName, f.account))).filter((i) => i.sk !== SCOPES_SEEN_SK);
    const rawBefore = await raw();
    const batches = () => f.meter.operations.get('BatchWriteItem') ?? 0;
    const batchesBefore = batches();
    const since = Date.now();
    // Every scope's progress seen current after this point, by a report that wrote no record.
    await vi.waitFor(async () => expect((await scopeProgress(f.table, f.account)).every((p) => p.at > since)).toBe(true), WAIT);
    expect(batches()).toBe(batchesBefore);
    expect(await raw()).toEqual(rawBefore);
    await first.stop();
    f.kube.requests.clear();
    f.kube.store.create(configMap('shop', 'after-restart'));
    await f.agent();
    await converged();
    expect(listsOf(f.kube)).toBe(0);
  });

  it('lists again the scopes whose progress is older than maxResumableResourceAgeMs', async () => {
    await start();
    await cachedThenStopped();
    await new Promise((r) => setTimeout(r, 30));
    await f.agent({ settings: { maxResumableResourceAgeMs: 1 } });
    await vi.waitFor(() => expect(listsOf(f.kube, 'configmaps')).toBe(1), WAIT);
    await converged();
  });
});

describe('410 Gone', () => {
  it('lists again only the kind whose resourceVersion expired', async () => {
    await start();
    const agent = await f.agent();
    await converged();
    await allListed(agent);
    f.kube.requests.clear();
    // A write of another kind moves the version past where the config map watch stands.
    f.kube.store.create(pod('shop', 'before-compaction'));
    await converged();
    f.kube.faults.compact(undefined, { apiVersion: 'v1', kind: 'ConfigMap' });
    f.kube.faults.dropWatches();
    f.kube.store.create(configMap('shop', 'after-compaction'));
    f.kube.store.create(pod('shop', 'after-compaction'));
    await converged();
    await vi.waitFor(async () => expect((await kindHealth('ConfigMap'))?.expired).toBe(1), WAIT);
    expect(listsOf(f.kube, 'configmaps')).toBe(1);
    expect(listsOf(f.kube)).toBe(1);
    expect((await kindHealth('Pod'))?.expired).toBe(0);
  });

  it('an expired continue token lists again from the start (paged lists)', async () => {
    await start(false);
    // Pages of 5 of the 20 config maps, each answered late, so the history can be compacted while
    // the second page is on its way.
    const pageOfFive = { verb: 'list', resource: 'configmaps', query: { limit: '5' } };
    f.kube.faults.latency(300, pageOfFive);
    await f.agent({ timing: { pageSize: 5 } });
    await vi.waitFor(() => expect(f.kube.requests.count(pageOfFive)).toBe(2), WAIT);
    f.kube.store.create(pod('shop', 'moves-the-version'));
    f.kube.faults.compact();
    f.kube.faults.clear();
    await converged();
    const pages = f.kube.requests.log().filter((r) => r.verb === 'list' && r.resource === 'configmaps');
    expect(pages.map((p) => p.code)).toEqual([200, 410, 200, 200, 200, 200]);
    await vi.waitFor(async () => expect((await kindHealth('ConfigMap'))?.expired).toBe(1), WAIT);
  });
});

describe('a driver that lost what it acknowledged', () => {
  // A replica acknowledges a batch once taken and writes it a moment later; one that dies between
  // loses it. The agent's next stream finds the table behind what it sent, and what is missing must
  // be sent again, including objects at versions the agent sent before. The loss is made here by
  // putting the table back to an earlier state, then starting a new stream. No periodic report runs
  // meanwhile (its progress would tell the table it holds what it does not).
  const quiet = { timing: { healthIntervalMs: 600_000 } };
  const CONFIGMAPS = { group: '', kind: 'ConfigMap', namespace: '' };

  it('a scope the table lost whole is listed again and every object sent again', async () => {
    await start();
    const agent = await f.agent(quiet);
    await converged();
    await resumable(agent);
    const lost = (await listResources(f.table, f.account, { kind: 'configmap' }, 1000)).items;
    expect(lost.length).toBe(20);
    await writeResources(f.table, f.account, lost.map((i) => ({ op: 'delete' as const, ref: { ...CONFIGMAPS, namespace: i.namespace, name: i.name } })));
    await deleteScopeProgress(f.table, f.account, CONFIGMAPS);
    f.kube.requests.clear();
    agent.connection.reconnect('a new stream, to another replica');
    await converged();
    expect(listsOf(f.kube, 'configmaps')).toBe(1);
    expect(listsOf(f.kube)).toBe(1);
  });

  it('changes the table lost after its progress are watched again from there and sent again', async () => {
    await start();
    const agent = await f.agent(quiet);
    await converged();
    await resumable(agent);
    const progress = (await scopeProgress(f.table, f.account)).find((p) => p.scope.kind === 'ConfigMap')!;
    const before = (await listResources(f.table, f.account, { kind: 'configmap' }, 1000)).items.filter((i) => i.name === 'cm-3');
    f.kube.store.patch({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-3' }, { data: { a: 'changed' } });
    f.kube.store.create(configMap('shop', 'added'));
    await converged();
    await resumable(agent);
    // The table back to where it stood before the two changes.
    await writeResources(f.table, f.account, [
      ...before.map((i) => ({ op: 'put' as const, ref: { ...CONFIGMAPS, namespace: i.namespace, name: i.name }, resourceVersion: i.resourceVersion, object: i.object, at: i.updatedAt })),
      { op: 'delete' as const, ref: { ...CONFIGMAPS, namespace: 'shop', name: 'added' } },
    ]);
    await putScopeProgress(f.table, f.account, { ...progress, at: Date.now() });
    expect(await f.tableObjects()).not.toEqual(f.clusterObjects(BUILT_IN_KINDS));
    f.kube.requests.clear();
    agent.connection.reconnect('a new stream, to another replica');
    await converged();
    expect(listsOf(f.kube)).toBe(0);
    expect(f.kube.requests.log().some((r) => r.verb === 'watch' && r.resource === 'configmaps' && r.query.includes(`resourceVersion=${progress.resourceVersion}`))).toBe(true);
  });
});

describe('watches that end', () => {
  it('a dropped watch is started again from where it was, without a list', async () => {
    await start();
    const agent = await f.agent();
    await converged();
    await allListed(agent);
    f.kube.requests.clear();
    expect(f.kube.faults.dropWatches({ resource: 'configmaps' }, 'destroy')).toBe(1);
    f.kube.store.create(configMap('shop', 'after-drop'));
    await converged();
    expect(listsOf(f.kube)).toBe(0);
    expect(f.kube.requests.count({ verb: 'watch', resource: 'configmaps' })).toBeGreaterThanOrEqual(1);
  });

  it('a silent watch is ended by the watchdog past its timeout and started again', async () => {
    await start();
    const clock = new ManualClock(Date.now());
    const agent = await f.agent({ clock });
    await converged();
    await allListed(agent);
    f.kube.requests.clear();
    expect(f.kube.faults.silenceWatches({ resource: 'configmaps' })).toBe(1);
    f.kube.store.create(configMap('shop', 'while-silent'));
    await new Promise((r) => setTimeout(r, 200));
    expect((await f.tableObjects()).has('ConfigMap|shop/while-silent')).toBe(false);
    // The watch asked for 450 s (300 s drawn at 0.5); the watchdog allows 30 s more.
    await clock.advance(479_000);
    expect(f.kube.requests.count({ verb: 'watch', resource: 'configmaps' })).toBe(0);
    await clock.advance(2000);
    await converged();
    expect(f.kube.requests.count({ verb: 'watch', resource: 'configmaps' })).toBe(1);
    expect(listsOf(f.kube)).toBe(0);
  });
});

/** A page of the reflector's paged list of config maps (pages of 50). */
const PAGE_OF_CONFIGMAPS = { verb: 'list', resource: 'configmaps', query: { limit: '50' } };

describe('kubernetes.retries and backoff', () => {
  it('a 500 is not retried by the request when retryableErrors do not match; the reflector backs off and tries again', async () => {
    await start(false);
    f.kube.faults.fail(PAGE_OF_CONFIGMAPS, 500, 2);
    const agent = await f.agent({ retries: { enabled: true, maxRetries: 3, backOffMs: 1, retryAnyError: false, retryableErrors: ['timeout'] } });
    await converged();
    expect(f.kube.requests.count(PAGE_OF_CONFIGMAPS)).toBe(3);
    await worksAgain('ConfigMap');
    // One line when the scope began failing (not one per retry), one when it worked again.
    const failed = agent.logs.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('cache of ConfigMap failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]?.err).toContain('500 Internal error occurred: injected fault');
    expect(agent.logs.lines.filter((l) => l.msg === 'cache of ConfigMap works again')).toHaveLength(1);
  });

  it('retryAnyError retries a 500 within the request, maxRetries tries in all', async () => {
    await start(false);
    f.kube.faults.fail(PAGE_OF_CONFIGMAPS, 500, 2);
    const agent = await f.agent({ retries: { enabled: true, maxRetries: 3, backOffMs: 1, retryAnyError: true, retryableErrors: [] } });
    await converged();
    expect(f.kube.requests.count(PAGE_OF_CONFIGMAPS)).toBe(3);
    expect((await kindHealth('ConfigMap'))?.lastError).toBeUndefined();
    expect(agent.logs.lines.filter((l) => l.msg === 'cluster request failed; retrying')).toHaveLength(2);
  });

  it('a 429 is retried within the request when its message matches retryableErrors', async () => {
    await start(false);
    f.kube.faults.fail(PAGE_OF_CONFIGMAPS, 429, 1);
    await f.agent({ retries: { enabled: true, maxRetries: 3, backOffMs: 1, retryAnyError: false, retryableErrors: ['too many requests'] } });
    await converged();
    expect(f.kube.requests.count(PAGE_OF_CONFIGMAPS)).toBe(2);
    expect((await kindHealth('ConfigMap'))?.lastError).toBeUndefined();
  });

  it('with retries disabled a 429 fails the list and the reflector backs off', async () => {
    await start(false);
    f.kube.faults.fail(PAGE_OF_CONFIGMAPS, 429, 1);
    const agent = await f.agent({ retries: { enabled: false, maxRetries: 3, backOffMs: 1, retryAnyError: true, retryableErrors: [] } });
    await converged();
    expect(f.kube.requests.count(PAGE_OF_CONFIGMAPS)).toBe(2);
    expect(agent.logs.lines.filter((l) => l.msg === 'cluster request failed; retrying')).toHaveLength(0);
    expect(agent.logs.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('cache of ConfigMap failed'))?.err).toContain('429');
    await worksAgain('ConfigMap');
  });
});

describe('a failing kind', () => {
  it('leaves every other kind current, and catches up once it recovers', async () => {
    await start();
    const fault = f.kube.faults.inject({ match: { resource: 'configmaps' }, times: Infinity, action: { type: 'status', code: 500 } });
    await f.agent();
    const others = () => new Map([...f.clusterObjects(BUILT_IN_KINDS)].filter(([k]) => !k.startsWith('ConfigMap|')));
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(others()), WAIT);
    f.kube.store.create(pod('shop', 'while-failing'));
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(others()), WAIT);
    await vi.waitFor(async () => {
      const h = await kindHealth('ConfigMap');
      expect(h?.lastError).toContain('500');
      expect(h?.watching).toBe(0);
    }, WAIT);
    expect((await kindHealth('Pod'))?.watching).toBe(1);
    f.kube.faults.remove(fault);
    await converged();
  });
});
