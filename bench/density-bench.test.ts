import { describe, expect, it } from 'vitest';
import { BENCH_KINDS } from './cache-child.ts';
import { benchDensity, densityAgentConfig, fullySynced } from './density-bench.ts';
import { parseChurn, spreadUpdates } from './density-clusters.ts';

const KINDS = BENCH_KINDS.map((k) => k.kind);
const kind = (name: string, scopes: number, watching: number) => ({ group: '', kind: name, scopes, watching, objects: 1, relists: 1, expired: 0 });
const progressOf = (kinds: readonly string[]) => kinds.map((k) => ({ scope: { group: '', kind: k, namespace: '' } }));

describe('bench:density', () => {
  it('spreads updates and clusters evenly, the first taking the remainder', () => {
    expect(spreadUpdates(100, 4)).toEqual([25, 25, 25, 25]);
    expect(spreadUpdates(10, 4)).toEqual([3, 3, 2, 2]);
    expect(spreadUpdates(2, 3)).toEqual([1, 1, 0]);
  });

  it('parses the churn command and refuses anything else', () => {
    expect(parseChurn('100x180')).toEqual({ perSecond: 100, seconds: 180 });
    expect(() => parseChurn('100')).toThrow(/updates-per-second/);
    expect(() => parseChurn('-1x2')).toThrow(/updates-per-second/);
  });

  it('an account is synced only when every kind watches in every scope and has a resumable version', () => {
    const all = { kinds: KINDS.map((k) => kind(k, 1, 1)) };
    expect(fullySynced(all, progressOf(KINDS), KINDS)).toBe(true);
    expect(fullySynced(undefined, progressOf(KINDS), KINDS)).toBe(false);
    // A WatchList watches before its initial events are in: no version stored yet.
    expect(fullySynced(all, progressOf(KINDS.slice(1)), KINDS)).toBe(false);
    expect(fullySynced({ kinds: all.kinds.slice(1) }, progressOf(KINDS), KINDS)).toBe(false);
    expect(fullySynced({ kinds: [kind('Pod', 2, 1), ...all.kinds.slice(1)] }, progressOf(KINDS), KINDS)).toBe(false);
    expect(fullySynced({ kinds: [kind('Pod', 0, 0), ...all.kinds.slice(1)] }, progressOf(KINDS), KINDS)).toBe(false);
  });

  it('gives every account its own kubeconfig file and the benchmark kinds', () => {
    const config = densityAgentConfig({ driverPort: 1, dir: '/d', accounts: 3 }) as { kubernetes: { accounts: { name: string; kubeConfigFile: string; kinds: string[] }[] } };
    expect(config.kubernetes.accounts.map((a) => a.kubeConfigFile)).toEqual(['/d/kubeconfig-0', '/d/kubeconfig-1', '/d/kubeconfig-2']);
    expect(new Set(config.kubernetes.accounts.map((a) => a.name)).size).toBe(3);
    expect(config.kubernetes.accounts[0]!.kinds).toEqual(KINDS);
  });

  // Runs the benchmark small, to keep it working; only machine-independent figures are asserted.
  it('prints every figure beside its baseline, every cluster a server of its own', async () => {
    const lines: Record<string, unknown>[] = [];
    await benchDensity({ accounts: 3, hosts: 2, objects: 40, namespaces: 2, settleMs: 200, churnPerSecond: 6, churnSeconds: 2, trace: true }, (l) => void lines.push(l));
    const figures = new Map(lines.map((l) => [l.figure, l]));
    expect([...figures.keys()]).toEqual(['seeded', 'sync_trace', 'first_full_sync', 'rss_at_sync', 'settled_rss', 'rss_after_churn', 'cpu_during_churn']);
    // Where the time went: the driver's handlers of the cache messages, and the agent's own timeline.
    expect(figures.get('sync_trace')).toMatchObject({ driver_handlers: { resourceEvents: { n: expect.any(Number) }, resumeQuery: { n: 3 } }, agent: { account_held: { n: 3 }, scopes_started: { n: 3 } } });
    expect(figures.get('seeded')).toMatchObject({ accounts: 3, distinct_servers: 3, host_processes: 2 });
    // Every seeded object and each cluster's default/kubernetes service, on both sides.
    expect(figures.get('first_full_sync')).toMatchObject({ objects_in_scope_progress: 123, baseline_objects: 123 });
    expect(figures.get('first_full_sync')!.agent_all_watching_ms).toBeGreaterThan(0);
    expect(figures.get('rss_after_churn')).toMatchObject({ churn: { updates: 12, baseline_updates: 12 } });
    for (const name of ['first_full_sync', 'settled_rss', 'rss_after_churn']) expect(figures.get(name)!.baseline).toBeGreaterThan(0);
  }, 180_000);
});
