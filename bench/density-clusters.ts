/**
 * The clusters of `npm run bench:density`, several in one process: each is a test API server of its
 * own (test/kube), with its own port, CA and serving certificate, store and bearer token, seeded with
 * realistic objects and described by a kubeconfig file of its own. A process serves many of them so
 * that 100 clusters do not need 100 Node processes.
 *
 *   node bench/density-clusters.ts '{"first":0,"count":25,"objects":500,"namespaces":5,"dir":"/tmp/x"}'
 *
 * Prints `{"event":"ready","clusters":[{"index","url","kubeconfig"}],"seeded":{kind:count},"seedMs"}`
 * once every server is seeded. Commands on stdin (bench/cache-child.ts):
 *
 * - `churn <updates-per-second>x<seconds>`: light churn, the updates of each second spread over every
 *   cluster of the process in turn (pods, config maps and deployments); prints `{"event":"churned"}`.
 * - `stop`: closes every server and exits.
 */
import { join } from 'node:path';
import { churn, seedCluster, startTestApiServer, type TestApiServer } from '../test/kube/index.ts';
import { commands, report } from './cache-child.ts';

export interface ClusterHostOptions {
  /** Index of the first cluster of this process (names its kubeconfig and token). */
  first: number;
  count: number;
  objects: number;
  namespaces: number;
  /** Where the kubeconfig files go: `kubeconfig-<index>`. */
  dir: string;
}

/** The objects churn touches in every cluster: a few kinds, not only pods. */
export const CHURNED_KINDS = [
  { apiVersion: 'v1', kind: 'Pod' },
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
];

/** `count` updates split over `clusters` as evenly as they go, the first clusters taking the remainder. */
export function spreadUpdates(count: number, clusters: number): number[] {
  const base = Math.floor(count / clusters);
  return Array.from({ length: clusters }, (_, i) => base + (i < count % clusters ? 1 : 0));
}

/** Parses `<updates-per-second>x<seconds>`, the argument of `churn`. */
export function parseChurn(argument: string): { perSecond: number; seconds: number } {
  const m = /^(\d+)x(\d+)$/.exec(argument);
  if (m === null) throw new Error(`churn wants <updates-per-second>x<seconds>, got "${argument}"`);
  return { perSecond: Number(m[1]), seconds: Number(m[2]) };
}

export const kubeconfigPath = (dir: string, index: number) => join(dir, `kubeconfig-${index}`);

async function host(options: ClusterHostOptions): Promise<void> {
  const servers: TestApiServer[] = [];
  const seeded: Record<string, number> = {};
  const started = performance.now();
  for (let i = 0; i < options.count; i++) {
    const index = options.first + i;
    const token = `density-cluster-token-${String(index).padStart(4, '0')}`;
    const server = await startTestApiServer({ tls: true, auth: { tokens: { [token]: 'density' } } });
    servers.push(server);
    const result = await seedCluster(server.store, { objects: options.objects, namespaces: options.namespaces });
    for (const [kind, n] of Object.entries(result.created)) seeded[kind] = (seeded[kind] ?? 0) + n;
    server.writeKubeconfig(kubeconfigPath(options.dir, index), { token });
  }
  report({
    event: 'ready',
    clusters: servers.map((s, i) => ({ index: options.first + i, url: s.url, kubeconfig: kubeconfigPath(options.dir, options.first + i) })),
    seeded,
    seedMs: Math.round(performance.now() - started),
  });
  // The benchmark gone (its stdin closed), nothing is left running.
  process.stdin.once('end', () => process.exit(0));
  commands({
    churn: async (argument) => {
      const { perSecond, seconds } = parseChurn(argument);
      const shares = spreadUpdates(perSecond, servers.length);
      let updated = 0;
      const t0 = performance.now();
      for (let s = 0; s < seconds; s++) {
        for (let i = 0; i < servers.length; i++) {
          if (shares[i] === 0) continue;
          updated += (await churn(servers[i]!.store, { count: shares[i]!, kinds: CHURNED_KINDS })).updated;
        }
        const next = t0 + (s + 1) * 1000;
        await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      }
      report({ event: 'churned', updated, ms: Math.round(performance.now() - t0) });
    },
    stop: async () => {
      await Promise.all(servers.map((s) => s.close()));
      process.exit(0);
    },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await host(JSON.parse(process.argv[2] ?? '{}') as ClusterHostOptions);
}
