import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { silentLogger } from '../../shared/log.ts';
import type { ResourceEvents__Output } from '../../shared/protocol/messages.ts';
import { scopeProgress } from '../../shared/table/resources/scopes.ts';
import { readScopeSet } from '../../shared/table/resources/scope-set.ts';
import { scopesOf } from '../../shared/table/resources/scope-set-kinds.ts';
import { listResources, writeResources } from '../../shared/table/resources/objects.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { useTestTables } from '../../test/support/table.ts';
import { AccountCacheWriter } from './writer.ts';
import { createAccount, getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { servedClusterStatus } from '../../shared/accounts/cluster-status-view.ts';

const tables = useTestTables();
const writers: AccountCacheWriter[] = [];
afterEach(async () => {
  for (const w of writers.splice(0)) await w.close();
});

const scope = (namespace = '', kind = 'ConfigMap') => ({ group: '', kind, namespace, synthetic: false });

function batch(over: Partial<ResourceEvents__Output>): ResourceEvents__Output {
  return { account: 'prod', cachingEpoch: 1, changes: [], syncs: [], progress: [], scopeSet: null, health: [], clusterStatus: null, resumeQueryId: 1, ...over };
}

function change(name: string, rv: string, deleted = false, namespace = 'a') {
  return { group: '', kind: 'ConfigMap', namespace, name, resourceVersion: rv, deleted, object: deleted ? '' : JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion: rv }, pad: 'x'.repeat(600) }) };
}

async function writer(options: { maxPending?: number } = {}) {
  const t = await tables.fresh();
  const w = new AccountCacheWriter('prod', { table: t, clock: systemClock, log: silentLogger(), progressIntervalMs: 0, ...options });
  writers.push(w);
  return { t, w };
}

const names = async (t: Parameters<typeof listResources>[0]) => (await listResources(t, 'prod', {}, 1000)).items.map((i) => `${i.namespace}/${i.name}@${i.resourceVersion}`);

describe('the account cache writer', () => {
  it('coalesces repeated changes of one object into one write of its latest state, one write unit each', async () => {
    const { t, w } = await writer();
    const before = tables.meter.snapshot();
    await w.take(batch({ changes: [change('x', '1'), change('y', '2'), change('x', '3'), change('x', '4'), change('y', '5', true)] }), 'agent-1');
    await w.idle();
    expect(await names(t)).toEqual(['a/x@4']);
    expect(w.stats).toMatchObject({ changes: 5, coalesced: 3, written: 2 });
    const used = tables.meter.since(before);
    // One put of x (under 1 KB) and one delete of y.
    expect(used.writeUnits).toBe(2);
  });

  it('a sync deletes what the list did not name, and keeps what changed after it', async () => {
    const { t, w } = await writer();
    await w.take(batch({ changes: [change('keep', '1'), change('gone', '2'), change('other-ns', '3', false, 'b')] }), 'agent-1');
    await w.idle();
    await w.take(
      batch({
        syncs: [{ scope: scope('a'), resourceVersion: '10', listId: 1, part: 1, last: false, keys: ['a/keep'] }],
      }),
      'agent-1',
    );
    await w.take(
      batch({
        changes: [change('created-after', '11')],
        syncs: [{ scope: scope('a'), resourceVersion: '10', listId: 1, part: 2, last: true, keys: [] }],
        progress: [{ scope: scope('a'), resourceVersion: '11', objects: 2 }],
      }),
      'agent-1',
    );
    await w.idle();
    expect(await names(t)).toEqual(['a/created-after@11', 'a/keep@1', 'b/other-ns@3']);
    expect(w.stats.swept).toBe(1);
    expect(await scopeProgress(t, 'prod')).toMatchObject([{ scope: { namespace: 'a' }, resourceVersion: '11', objects: 2 }]);
  });

  it('a sync keeps what another replica took after it arrived, and deletes what was written before', async () => {
    const { t, w } = await writer();
    const now = Date.now();
    // Written by other replicas: one an hour before the list, one a minute after this replica took
    // the list's sync (the agent's stream had moved there while this replica was still writing).
    const put = (name: string, rv: string, at: number) => ({ op: 'put' as const, ref: { group: '', kind: 'ConfigMap', namespace: 'a', name }, resourceVersion: rv, object: '{}', at });
    await writeResources(t, 'prod', [put('deleted-before-the-list', '1', now - 3_600_000), put('created-later-elsewhere', '30', now + 60_000)]);
    await w.take(
      batch({
        changes: [change('listed', '20')],
        syncs: [{ scope: scope('a'), resourceVersion: '20', listId: 1, part: 1, last: true, keys: ['a/listed'] }],
      }),
      'agent-1',
    );
    await w.idle();
    expect(await names(t)).toEqual(['a/created-later-elsewhere@30', 'a/listed@20']);
    expect(w.stats.swept).toBe(1);
  });

  it('an incomplete sync deletes nothing and leaves the scope without progress, so it is listed again', async () => {
    const { t, w } = await writer();
    await w.take(batch({ changes: [change('kept', '1')], progress: [{ scope: scope('a'), resourceVersion: '1', objects: 1 }] }), 'agent-1');
    await w.idle();
    expect(await scopeProgress(t, 'prod')).toHaveLength(1);
    // Part 1 never arrived (taken by a driver that stopped), part 2 is the last.
    await w.take(batch({ syncs: [{ scope: scope('a'), resourceVersion: '5', listId: 7, part: 2, last: true, keys: [] }], progress: [{ scope: scope('a'), resourceVersion: '5', objects: 0 }] }), 'agent-1');
    await w.idle();
    expect(await names(t)).toEqual(['a/kept@1']);
    expect(await scopeProgress(t, 'prod')).toEqual([]);
  });

  it('a new set of scopes deletes the objects and progress of scopes no longer cached', async () => {
    const { t, w } = await writer();
    await w.take(
      batch({
        scopeSet: { scopes: [scope(''), scope('', 'Secret')] },
        changes: [change('a1', '1'), change('b1', '2', false, 'b'), { ...change('s', '3'), kind: 'Secret' }],
        progress: [{ scope: scope(''), resourceVersion: '3', objects: 2 }, { scope: scope('', 'Secret'), resourceVersion: '3', objects: 1 }],
      }),
      'agent-1',
    );
    await w.idle();
    expect(await names(t)).toHaveLength(3);
    await w.take(batch({ scopeSet: { scopes: [scope('b')] } }), 'agent-1');
    await w.idle();
    expect(await names(t)).toEqual(['b/b1@2']);
    expect(await scopeProgress(t, 'prod')).toEqual([]);
    expect(scopesOf((await readScopeSet(t, 'prod'))?.kinds ?? [])).toEqual([{ group: '', kind: 'ConfigMap', namespace: 'b' }]);
  });

  it('takes a set of 10,000 scopes (200 namespaces listed, 50 kinds) and goes on writing the changes after it', async () => {
    const { t, w } = await writer();
    const scopes = Array.from({ length: 50 }, (_, k) => Array.from({ length: 200 }, (_, n) => ({ ...scope(`team-${n}`, `Kind${k}`), group: 'example.com' }))).flat();
    await w.take(batch({ scopeSet: { scopes } }), 'agent-1');
    await w.take(batch({ changes: [change('after', '1')] }), 'agent-1');
    await w.idle();
    expect(w.stats.failures).toBe(0);
    expect(await names(t)).toEqual(['a/after@1']);
    expect(scopesOf((await readScopeSet(t, 'prod'))?.kinds ?? [])).toHaveLength(10_000);
  });

  it('drops, with an error, a write the table refuses for good, and goes on with the account\'s other changes', async () => {
    const t = await tables.fresh();
    const { log, lines: records } = captureLogger();
    const dropped: string[] = [];
    const w = new AccountCacheWriter('prod', { table: t, clock: systemClock, log, progressIntervalMs: 0, onDropped: (write) => dropped.push(write) });
    writers.push(w);
    // What the driver's checks of agents' messages keep out: a health report of 2,000 kinds past the
    // table's 400 KB an item even compressed (random text: about 1.9 MB of it), and an object whose key
    // is past its 1,024 bytes.
    const noise = (chars: number) => randomBytes(chars).toString('base64').slice(0, chars);
    const kinds = Array.from({ length: 2000 }, (_, i) => ({ group: noise(253), kind: `K${i}`, scopes: 1, watching: 1, objects: 0, lastEventAgeMs: -1, relists: 0, expired: 0, lastError: noise(5000), lastErrorAgeMs: 0 }));
    const long = { ...change('n'.repeat(600), '2'), kind: 'K'.repeat(500) };
    await w.take(batch({ changes: [change('kept', '1'), long, change('also-kept', '3')], health: kinds }), 'agent-1');
    await w.take(batch({ changes: [change('after', '4')] }), 'agent-1');
    await w.idle();
    expect(await names(t)).toEqual(['a/after@4', 'a/also-kept@3', 'a/kept@1']);
    // Written: the three objects that fit; the refused one is not counted as written.
    expect(w.stats).toMatchObject({ dropped: 2, failures: 0, written: 3 });
    expect(dropped).toEqual(['object', 'cache_health']);
    expect(records.filter((r) => r['level'] === 50).map((r) => String(r['msg']).split(';')[0])).toEqual([
      `the table refuses the object ${'K'.repeat(500)} a/${'n'.repeat(300)} for good`,
      'the table refuses the cache health for good',
    ]);
  });

  it('a first sync of many scopes records their progress in one request, and each sync still deletes only its own scope\'s stale objects', async () => {
    const { t, w } = await writer();
    const kinds = Array.from({ length: 10 }, (_, i) => `Kind${i}`);
    const object = (kind: string, name: string) => ({ ...change(name, '1', false, ''), kind });
    // Left from an earlier cache of the account: gone from the cluster since.
    await writeResources(t, 'prod', kinds.map((kind) => ({ op: 'put' as const, ref: { group: '', kind, namespace: '', name: 'old' }, resourceVersion: '0', object: '{}', at: 0 })));
    const before = new Map(tables.meter.operations);
    await w.take(
      batch({
        changes: kinds.map((kind) => object(kind, 'listed')),
        syncs: kinds.map((kind, i) => ({ scope: scope('', kind), resourceVersion: '10', listId: i + 1, part: 1, last: true, keys: ['listed'] })),
        progress: kinds.map((kind) => ({ scope: scope('', kind), resourceVersion: '10', objects: 1 })),
      }),
      'agent-1',
    );
    await w.idle();
    const used = (op: string) => (tables.meter.operations.get(op) ?? 0) - (before.get(op) ?? 0);
    expect(used('PutItem')).toBe(0);
    // The objects (10 puts), the stale ones (10 deletes, one request per 8 syncs read together) and
    // the progress of the 10 scopes, 25 to a request; one sync after another it took 1 + 10 and 10 PutItem.
    expect(used('BatchWriteItem')).toBe(1 + 2 + 1);
    expect((await scopeProgress(t, 'prod')).map((p) => `${p.scope.kind}@${p.resourceVersion}`).sort()).toEqual(kinds.map((k) => `${k}@10`).sort());
    expect((await listResources(t, 'prod', {}, 100)).items.map((i) => i.name)).toEqual(kinds.map(() => 'listed'));
  });

  it('keeps the times of a cluster status within dates whatever ages the agent sends', async () => {
    const { t, w } = await writer();
    await createAccount(t, 'prod', 1);
    await updateAccount(t, 'prod', 1, { cachingAgentId: 'agent-1', cachingEpoch: 1 }, 1);
    const far = Number.MAX_SAFE_INTEGER;
    const status = { reachable: false, sinceAgeMs: far, reason: 'unreachable', error: 'x', lastOutageReason: 'unreachable', lastOutageFromAgeMs: far, lastOutageUntilAgeMs: far };
    await w.take(batch({ clusterStatus: status }), 'agent-1');
    await w.idle();
    const cluster = (await getAccount(t, 'prod', { consistent: true }))?.cluster;
    expect(cluster).toMatchObject({ since: 0, lastOutage: { from: 0, until: 0 } });
    const epoch = new Date(0).toISOString();
    expect(servedClusterStatus(cluster!)).toMatchObject({ since: epoch, lastOutage: { reason: 'unreachable', from: epoch, until: epoch } });
  });

  it('makes the agent wait while too many objects wait to be written', async () => {
    const { t, w } = await writer({ maxPending: 10 });
    const many = Array.from({ length: 10 }, (_, i) => change(`m${i}`, String(i + 1)));
    await w.take(batch({ changes: many }), 'agent-1');
    // The flush takes the ten at the next turn; the next batch is held until it has.
    expect(w.waiting).toBe(10);
    await w.take(batch({ changes: [change('late', '99')] }), 'agent-1');
    expect(w.waiting).toBe(1);
    await w.idle();
    expect(await names(t)).toHaveLength(11);
  });
});

/** A writer whose clock stands still until the test moves `clock.now`. */
async function clockedWriter() {
  const t = await tables.fresh();
  const clock = { now: 1_000_000 };
  const w = new AccountCacheWriter('prod', { table: t, clock: { now: () => clock.now, sleep: systemClock.sleep }, log: silentLogger(), progressIntervalMs: 0 });
  writers.push(w);
  return { t, w, clock };
}

describe('the account cache writer, a quiet account', () => {
  it('notes the progress a report repeats in one seen item instead of writing every scope again', async () => {
    const { t, w, clock } = await clockedWriter();
    const scopes = Array.from({ length: 60 }, (_, i) => scope(`ns-${i}`));
    const report = async (changedRv?: string) => {
      const before = tables.meter.snapshot();
      const progress = scopes.map((s, i) => ({ scope: s, resourceVersion: i === 0 && changedRv !== undefined ? changedRv : '100', objects: 2 }));
      await w.take(batch({ progress }), 'agent-1', 'https://a:6443');
      await w.idle();
      return tables.meter.since(before).writeUnits;
    };
    // First: every scope's progress written, a unit each.
    expect(await report()).toBe(60);
    // A minute later the same versions: one small item, and every record as recent as the report.
    clock.now += 60_000;
    const quiet = await report();
    expect(quiet).toBeLessThanOrEqual(2);
    const stored = await scopeProgress(t, 'prod');
    expect(stored).toHaveLength(60);
    expect(new Set(stored.map((p) => p.at))).toEqual(new Set([clock.now]));
    // One scope moved on: its record written, the others seen again.
    clock.now += 60_000;
    expect(await report('101')).toBeLessThanOrEqual(1 + quiet);
    const after = await scopeProgress(t, 'prod');
    expect(after.find((p) => p.scope.namespace === 'ns-0')).toMatchObject({ resourceVersion: '101', at: clock.now });
    expect(after.every((p) => p.at === clock.now)).toBe(true);
  });
});

describe('the account cache writer, a quiet account of very many scopes', () => {
  it('writes the records again when the versions seen would not fit one item', async () => {
    const { t, w, clock } = await clockedWriter();
    // Namespaces of random text, which does not compress: more versions than the seen item takes.
    const scopes = Array.from({ length: 8000 }, () => scope(randomBytes(45).toString('base64url').slice(0, 60)));
    const progress = scopes.map((s) => ({ scope: s, resourceVersion: '100', objects: 2 }));
    await w.take(batch({ progress }), 'agent-1', 'https://a:6443');
    await w.idle();
    clock.now += 60_000;
    const before = tables.meter.snapshot();
    await w.take(batch({ progress }), 'agent-1', 'https://a:6443');
    await w.idle();
    expect(tables.meter.since(before).writeUnits).toBe(8000);
    const stored = await scopeProgress(t, 'prod');
    expect(stored).toHaveLength(8000);
    expect(stored.every((p) => p.at === clock.now)).toBe(true);
  });
});
