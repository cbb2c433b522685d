/**
 * The cluster probe on a manual clock: one look for every waiting scope, its own short backoff, every
 * scope released together (each after its own jitter) when the cluster answers, what operators are
 * shown, and one log line each way.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { kubeHttpError, kubeTransportError } from '../clusters/errors.ts';
import type { ClusterClient, KubeRequest, KubeResponse } from '../clusters/index.ts';
import { ClusterProbe, outageReasonOf, type ClusterProbeTiming } from './cluster-probe.ts';

const TIMING: ClusterProbeTiming = { probeInitialMs: 250, probeMaxMs: 2000, probeTimeoutMs: 2000, resumeJitterMs: 500 };
const refused = () => kubeTransportError('prod', 'GET', '/version', new Error('connect ECONNREFUSED 10.0.0.1:443'));
const unauthorized = () => kubeHttpError('prod', 'GET', '/version', 401, Buffer.from('{"kind":"Status","message":"Unauthorized","code":401}'));

/** A cluster whose answer to every request the test sets. */
function fakeCluster() {
  const requests: KubeRequest[] = [];
  const c = {
    failure: refused() as Error | undefined,
    /** The answer to /readyz alone, when set. */
    notReady: undefined as Error | undefined,
    requests,
    client: {
      account: 'prod',
      server: 'https://10.0.0.1:443',
      request: async (req: KubeRequest): Promise<KubeResponse> => {
        requests.push(req);
        if (c.failure !== undefined) throw c.failure;
        if (req.path === '/readyz' && c.notReady !== undefined) throw c.notReady;
        const body = Buffer.from('{"gitVersion":"v1.30.0"}');
        return { status: 200, headers: {}, body, json: <T>() => JSON.parse(body.toString()) as T };
      },
      stream: () => Promise.reject(new Error('not used')),
      version: () => Promise.reject(new Error('not used')),
      close: () => undefined,
    } satisfies ClusterClient,
  };
  return c;
}

function setUp(random = () => 0.5) {
  const clock = new ManualClock(1_000_000);
  const cluster = fakeCluster();
  const logs = captureLogger();
  let changes = 0;
  const probe = new ClusterProbe({ cluster: cluster.client, clock, random, log: logs.log, timing: TIMING, onChange: () => changes++ });
  return { clock, cluster, logs, probe, changes: () => changes };
}

/** Lets promise callbacks run without moving the clock. */
const settle = () => new Promise((r) => setImmediate(r));

describe('outageReasonOf', () => {
  it('names no answer and a refused credential, and leaves a kind\'s own failures to the kind', () => {
    expect(outageReasonOf(refused())).toBe('unreachable');
    expect(outageReasonOf(unauthorized())).toBe('unauthorized');
    expect(outageReasonOf(kubeHttpError('prod', 'GET', '/api/v1/secrets', 403, Buffer.from('forbidden')))).toBeUndefined();
    expect(outageReasonOf(kubeHttpError('prod', 'GET', '/api/v1/pods', 500, Buffer.from('')))).toBeUndefined();
    expect(outageReasonOf(new Error('a malformed line'))).toBeUndefined();
  });
});

describe('the cluster probe', () => {
  it('looks once for every waiting scope, backs off on its own, and releases them all when the cluster answers', async () => {
    const { clock, cluster, logs, probe, changes } = setUp();
    const signal = new AbortController().signal;
    const released: number[] = [];
    const waits = [0, 1, 2].map(() => probe.waitFor('unreachable', refused(), signal).then((ended) => (released.push(clock.now()), ended)));
    await settle();
    // Three scopes failed; one look, at once.
    expect(cluster.requests).toHaveLength(1);
    expect(cluster.requests[0]).toMatchObject({ path: '/version', retry: false, timeoutMs: TIMING.probeTimeoutMs });
    expect(probe.reachability).toMatchObject({ reachable: false, since: 1_000_000, reason: 'unreachable' });
    expect(probe.reachability.error).toContain('ECONNREFUSED');
    expect(probe.waiting).toBe(3);
    // Its own backoff: 250 ms doubling to 2 s, each wait three quarters of it with this random source.
    const looksAt: number[] = [];
    for (let i = 0; i < 8; i++) {
      const before = cluster.requests.length;
      while (cluster.requests.length === before) await clock.advance(1);
      looksAt.push(clock.now() - 1_000_000);
    }
    const gaps = looksAt.map((t, i) => t - (i === 0 ? 0 : looksAt[i - 1]!));
    expect(gaps).toEqual([188, 375, 750, 1500, 1500, 1500, 1500, 1500]);
    expect(released).toEqual([]);

    cluster.failure = undefined;
    const backAt = clock.now() + 1500;
    await clock.advance(1500);
    // Each scope after its own jitter (half of 500 ms here), not one by one on its own backoff.
    expect(released).toEqual([]);
    await clock.advance(250);
    expect(await Promise.all(waits)).toEqual([true, true, true]);
    expect(released).toEqual([backAt + 250, backAt + 250, backAt + 250]);
    expect(probe.reachability).toEqual({ reachable: true, since: backAt, lastOutage: { reason: 'unreachable', from: 1_000_000, until: backAt } });
    expect(changes()).toBe(2);

    const warned = logs.lines.filter((l) => l.level === 40);
    expect(warned.map((l) => l.msg)).toEqual(['the cluster does not answer; 3 scopes wait for it']);
    expect(logs.lines.filter((l) => l.msg === 'the cluster answers again after 10 s; 3 scopes start again')).toHaveLength(1);
    // Nothing more is looked at once it answered.
    const looks = cluster.requests.length;
    await clock.advance(60_000);
    expect(cluster.requests).toHaveLength(looks);
  });

  it('a scope that fails while the cluster answers is told so and backs off on its own; nothing is shown or logged', async () => {
    const { cluster, logs, probe, changes } = setUp();
    cluster.failure = undefined;
    const ended = await probe.waitFor('unreachable', refused(), new AbortController().signal);
    expect(ended).toBe(false);
    expect(cluster.requests.map((r) => r.path)).toEqual(['/version', '/readyz']);
    expect(probe.reachability.reachable).toBe(true);
    expect(probe.reachability.lastOutage).toBeUndefined();
    expect(changes()).toBe(0);
    expect(logs.lines).toEqual([]);
  });

  it('says when the credential is refused, and when it is taken again', async () => {
    const { clock, cluster, logs, probe } = setUp();
    cluster.failure = unauthorized();
    const wait = probe.waitFor('unauthorized', unauthorized(), new AbortController().signal);
    await settle();
    expect(probe.reachability).toMatchObject({ reachable: false, reason: 'unauthorized' });
    expect(logs.lines.map((l) => l.msg)).toEqual(["the cluster refuses the account's credential; 1 scopes wait for it"]);
    cluster.failure = undefined;
    await clock.advance(2000);
    await clock.advance(500);
    expect(await wait).toBe(true);
    expect(probe.reachability).toMatchObject({ reachable: true, lastOutage: { reason: 'unauthorized' } });
  });

  it('keeps the scopes waiting while a restarted API server answers but is not ready yet', async () => {
    const { clock, cluster, probe } = setUp();
    const wait = probe.waitFor('unreachable', refused(), new AbortController().signal);
    await settle();
    cluster.failure = undefined;
    cluster.notReady = kubeHttpError('prod', 'GET', '/readyz', 500, Buffer.from('[-]poststarthook/rbac/bootstrap-roles failed: not finished'));
    await clock.advance(2000);
    expect(cluster.requests.slice(-2).map((r) => r.path)).toEqual(['/version', '/readyz']);
    expect(probe.reachability).toMatchObject({ reachable: false, reason: 'unreachable' });
    expect(probe.reachability.error).toContain('/readyz');
    expect(probe.waiting).toBe(1);
    cluster.notReady = undefined;
    await clock.advance(2000);
    await clock.advance(500);
    expect(await wait).toBe(true);
    expect(probe.reachability.reachable).toBe(true);
  });

  it('a scope stopped while it waits leaves, and a stopped probe looks no more', async () => {
    const { clock, cluster, probe } = setUp();
    const stop = new AbortController();
    const wait = probe.waitFor('unreachable', refused(), stop.signal);
    await settle();
    stop.abort(new Error('scope stopped'));
    await expect(wait).rejects.toThrow('scope stopped');
    expect(probe.waiting).toBe(0);
    probe.stop();
    const looks = cluster.requests.length;
    await clock.advance(10_000);
    expect(cluster.requests).toHaveLength(looks);
  });
});
