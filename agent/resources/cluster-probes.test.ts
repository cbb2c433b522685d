/**
 * Accounts on one cluster share its probe: one look at a time for all their waiting scopes, every
 * scope of every account released when the cluster answers, and the probe stops with the last account.
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { kubeTransportError } from '../clusters/errors.ts';
import type { ClusterClient, KubeRequest, KubeResponse } from '../clusters/index.ts';
import type { ClusterProbeTiming } from './cluster-probe.ts';
import { ClusterProbes } from './cluster-probes.ts';

const TIMING: ClusterProbeTiming = { probeInitialMs: 250, probeMaxMs: 2000, probeTimeoutMs: 2000, resumeJitterMs: 500 };

/** One API server, down until `up` is set, reached by accounts whose clients log their requests. */
function server() {
  const state = { up: false, requests: [] as { account: string; path: string }[] };
  const client = (account: string, identity: string | undefined): ClusterClient => ({
    account,
    server: 'https://10.0.0.1:443',
    ...(identity === undefined ? {} : { identity }),
    request: async (req: KubeRequest): Promise<KubeResponse> => {
      state.requests.push({ account, path: req.path });
      if (!state.up) throw kubeTransportError(account, 'GET', req.path, new Error('connect ECONNREFUSED 10.0.0.1:443'));
      const body = Buffer.from('{"gitVersion":"v1.30.0"}');
      return { status: 200, headers: {}, body, json: <T>() => JSON.parse(body.toString()) as T };
    },
    stream: () => Promise.reject(new Error('not used')),
    version: () => Promise.reject(new Error('not used')),
    close: () => undefined,
  });
  return { state, client };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('cluster probes shared by the accounts on one cluster', () => {
  it('looks once for the scopes of every account, releases them all, and stops with the last account', async () => {
    const clock = new ManualClock(1_000_000);
    const { state, client } = server();
    const probes = new ClusterProbes();
    const changed = { prod: 0, staging: 0 };
    const deps = (account: 'prod' | 'staging') => ({ cluster: client(account, 'sha-of-server-and-user'), clock, random: () => 0.5, log: captureLogger().log, timing: TIMING });
    const prod = probes.acquire(deps('prod'), () => changed.prod++);
    const staging = probes.acquire(deps('staging'), () => changed.staging++);
    expect(staging.probe).toBe(prod.probe);
    expect(probes.size).toBe(1);

    const signal = new AbortController().signal;
    const failure = kubeTransportError('prod', 'GET', '/api/v1/pods', new Error('connect ECONNREFUSED 10.0.0.1:443'));
    const waits = [prod, prod, prod, staging, staging].map((l) => l.probe.waitFor('unreachable', failure, signal));
    await settle();
    // Five scopes of two accounts wait; one look at the cluster, not one per account.
    expect(state.requests).toEqual([{ account: 'prod', path: '/version' }]);
    for (let i = 0; i < 5; i++) {
      const before = state.requests.length;
      while (state.requests.length === before) await clock.advance(1);
    }
    expect(state.requests.filter((r) => r.path === '/version')).toHaveLength(6);

    state.up = true;
    // The next look (at most 2 s away) finds it up; each scope then starts after its jitter (250 ms here).
    for (let ms = 0; ms < 3_000; ms += 50) await clock.advance(50);
    expect(await Promise.all(waits)).toEqual([true, true, true, true, true]);
    // Both accounts were told the cluster went away and came back.
    expect(changed).toEqual({ prod: 2, staging: 2 });

    prod.release();
    expect(probes.size).toBe(1);
    staging.release();
    expect(probes.size).toBe(0);
    // A new lease after the last one went starts a probe of its own.
    const again = probes.acquire(deps('prod'), () => undefined);
    expect(again.probe).not.toBe(prod.probe);
    again.release();
  });

  it('gives accounts on other clusters, or whose client cannot say who it is, probes of their own', () => {
    const clock = new ManualClock(0);
    const { client } = server();
    const probes = new ClusterProbes();
    const deps = (account: string, identity: string | undefined) => ({ cluster: client(account, identity), clock, random: () => 0.5, log: captureLogger().log, timing: TIMING });
    const a = probes.acquire(deps('a', 'cluster-one'), () => undefined);
    const b = probes.acquire(deps('b', 'cluster-two'), () => undefined);
    const c = probes.acquire(deps('c', undefined), () => undefined);
    const d = probes.acquire(deps('d', undefined), () => undefined);
    expect(new Set([a.probe, b.probe, c.probe, d.probe]).size).toBe(4);
    expect(probes.size).toBe(2);
    for (const l of [a, b, c, d]) l.release();
    expect(probes.size).toBe(0);
  });
});
