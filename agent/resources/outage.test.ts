/**
 * The cache when its cluster goes away or refuses the credential, against the test API server, with
 * a real driver and table: every scope waits for the cluster's one probe and starts again when it
 * answers (the scopes' own backoff is set to a minute, so a scope that waited it out would not be
 * back within the test's wait), the account item says what the cluster does, `/cache` clears the
 * error once the kind works again, and the log has one line each way instead of one per kind and
 * retry. A forbidden kind keeps its own backoff, alone.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getAccount } from '../../shared/table/accounts/records.ts';
import { getCacheHealth } from '../../shared/table/resources/health.ts';
import { BUILT_IN_KINDS, CacheFixture, WAIT, configMap, type CacheAgent } from '../../test/resource-cache-harness.ts';
import type { CacheTiming } from './cache-run.ts';

const AGENT_TOKEN = 'outage-agent-token-0001';

/** A scope that backed off on its own would wait a minute (with the harness's random source, exactly). */
const OWN_BACKOFF_A_MINUTE: Partial<CacheTiming> = { backoffInitialMs: 60_000, backoffMaxMs: 60_000 };

let f: CacheFixture;
afterEach(async () => {
  await f.close();
});

const tokens: Record<string, { username: string; groups: string[] }> = {};

async function start(authorize?: (user: unknown, attributes: { resource: string }) => boolean): Promise<CacheFixture> {
  tokens[AGENT_TOKEN] = { username: 'vendor-agent', groups: ['system:masters'] };
  f = await new CacheFixture().start({ auth: { tokens }, ...(authorize === undefined ? {} : { authorize }) });
  f.kube.store.ensureNamespace('shop');
  for (let i = 0; i < 5; i++) f.kube.store.create(configMap('shop', `cm-${i}`));
  return f;
}

async function converged(): Promise<void> {
  await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(f.clusterObjects(BUILT_IN_KINDS)), WAIT);
}

async function watchingAll(agent: CacheAgent): Promise<void> {
  await vi.waitFor(() => {
    const status = agent.worker.run?.status();
    expect(status?.scopes).toBe(BUILT_IN_KINDS.length);
    expect(status?.synced).toBe(status?.scopes);
  }, WAIT);
}

const clusterStatus = async () => (await getAccount(f.table, f.account, { consistent: true }))?.cluster;
const kindHealth = async (kind: string) => (await getCacheHealth(f.table, f.account))?.kinds.find((k) => k.kind === kind);
const messages = (agent: CacheAgent) => agent.logs.lines.map((l) => String(l.msg));
const perKindFailures = (agent: CacheAgent) => messages(agent).filter((m) => /^cache of .* failed/.test(m));

describe('the cluster goes away', () => {
  it('every scope waits for one probe and is back as soon as the cluster answers; what operators see follows', async () => {
    await start();
    const agent = await f.agent({ timing: OWN_BACKOFF_A_MINUTE });
    await converged();
    await watchingAll(agent);
    await vi.waitFor(async () => expect(await clusterStatus()).toMatchObject({ reachable: true, agentId: 'agent-1' }), WAIT);

    // No answer to anything, open watches cut.
    const cut = f.kube.faults.closeConnection({}, Infinity);
    f.kube.faults.dropWatches({}, 'destroy');
    await vi.waitFor(async () => {
      expect(await clusterStatus()).toMatchObject({ reachable: false, reason: 'unreachable' });
      expect((await kindHealth('ConfigMap'))?.lastError).toMatch(/socket hang up|ECONNRESET|aborted/);
    }, WAIT);
    const probes = () => f.kube.requests.log().filter((r) => r.path === '/version').length;
    const before = probes();
    await vi.waitFor(() => expect(probes()).toBeGreaterThan(before + 2), WAIT);

    f.kube.faults.remove(cut);
    f.kube.store.create(configMap('shop', 'after-the-outage'));
    await converged();
    await vi.waitFor(async () => {
      const status = await clusterStatus();
      expect(status).toMatchObject({ reachable: true, lastOutage: { reason: 'unreachable' } });
      expect(status?.reason).toBeUndefined();
      const health = await kindHealth('ConfigMap');
      expect(health?.lastError).toBeUndefined();
      expect(health?.lastErrorAt).toBeTypeOf('number');
    }, WAIT);

    expect(messages(agent).filter((m) => m.startsWith('the cluster does not answer'))).toHaveLength(1);
    expect(messages(agent).filter((m) => m.startsWith('the cluster answers again'))).toHaveLength(1);
    expect(perKindFailures(agent)).toEqual([]);
  });

  it('a refused credential holds every scope until it is taken again', async () => {
    await start();
    const agent = await f.agent({ timing: OWN_BACKOFF_A_MINUTE });
    await converged();
    await watchingAll(agent);

    const revoked = tokens[AGENT_TOKEN]!;
    delete tokens[AGENT_TOKEN];
    f.kube.faults.dropWatches({}, 'end');
    await vi.waitFor(async () => expect(await clusterStatus()).toMatchObject({ reachable: false, reason: 'unauthorized' }), WAIT);
    expect((await clusterStatus())?.error).toContain('401');

    tokens[AGENT_TOKEN] = revoked;
    f.kube.store.create(configMap('shop', 'after-the-credential'));
    await converged();
    await vi.waitFor(async () => expect(await clusterStatus()).toMatchObject({ reachable: true, lastOutage: { reason: 'unauthorized' } }), WAIT);
    expect(messages(agent).filter((m) => m === "the cluster refuses the account's credential; " + m.split('; ')[1])).toHaveLength(1);
    expect(perKindFailures(agent)).toEqual([]);
  });
});

describe('a forbidden kind', () => {
  it('keeps its own backoff, holds no other kind back, and is logged once, then summed up now and then', async () => {
    let forbid = true;
    await start((_user, attributes) => !(forbid && attributes.resource === 'configmaps'));
    const agent = await f.agent({ timing: { failureSummaryMs: 100 } });
    const others = () => new Map([...f.clusterObjects(BUILT_IN_KINDS)].filter(([k]) => !k.startsWith('ConfigMap|')));
    await vi.waitFor(async () => expect(await f.tableObjects()).toEqual(others()), WAIT);
    // It tried again and again on its own backoff, and said so once.
    await vi.waitFor(() => expect(f.kube.requests.count({ resource: 'configmaps' })).toBeGreaterThanOrEqual(4), WAIT);
    await vi.waitFor(() => expect(messages(agent).filter((m) => m.startsWith('1 scopes still failing')).length).toBeGreaterThanOrEqual(1), WAIT);
    expect(perKindFailures(agent)).toEqual(['cache of ConfigMap failed; retrying with backoff (logged again when it works)']);
    expect(messages(agent).find((m) => m.startsWith('1 scopes still failing'))).toContain('ConfigMap (');
    // Not the cluster's failure: no probe, nothing shown as unreachable.
    expect(f.kube.requests.log().filter((r) => r.path === '/version')).toHaveLength(0);
    expect(messages(agent).filter((m) => m.startsWith('the cluster'))).toEqual([]);
    expect((await clusterStatus())?.reachable).not.toBe(false);

    forbid = false;
    await converged();
    await vi.waitFor(async () => expect((await kindHealth('ConfigMap'))?.lastError).toBeUndefined(), WAIT);
    expect(messages(agent).filter((m) => m === 'cache of ConfigMap works again')).toHaveLength(1);
  });
});
