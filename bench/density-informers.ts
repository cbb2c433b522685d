/**
 * The baseline of `npm run bench:density`, in a process of its own: for every account's cluster, one
 * `@kubernetes/client-node` informer per kind (the kinds the agent caches), all started together.
 * Reports when every informer of every cluster has synced; then waits for `stop`.
 *
 *   node bench/density-informers.ts <kubeconfig>...
 */
import { AppsV1Api, BatchV1Api, CoreV1Api, KubeConfig, makeInformer, type Informer, type KubernetesObject, type ObjectCache } from '@kubernetes/client-node';
import { BENCH_KINDS, commands, report } from './cache-child.ts';

type Lists = Record<(typeof BENCH_KINDS)[number]['kind'], () => Promise<{ items: KubernetesObject[]; metadata?: { resourceVersion?: string } }>>;

/** The list call of every benchmark kind, as an informer of that kind is made with. */
export function informerLists(kc: KubeConfig): Lists {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  return {
    Pod: () => core.listPodForAllNamespaces(),
    ReplicaSet: () => apps.listReplicaSetForAllNamespaces(),
    Deployment: () => apps.listDeploymentForAllNamespaces(),
    Service: () => core.listServiceForAllNamespaces(),
    ConfigMap: () => core.listConfigMapForAllNamespaces(),
    Secret: () => core.listSecretForAllNamespaces(),
    ServiceAccount: () => core.listServiceAccountForAllNamespaces(),
    StatefulSet: () => apps.listStatefulSetForAllNamespaces(),
    DaemonSet: () => apps.listDaemonSetForAllNamespaces(),
    Job: () => batch.listJobForAllNamespaces(),
  };
}

async function main(kubeconfigs: readonly string[]): Promise<void> {
  const started = performance.now();
  const informers: (Informer<KubernetesObject> & ObjectCache<KubernetesObject>)[] = [];
  for (const file of kubeconfigs) {
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    const lists = informerLists(kc);
    for (const { kind, path } of BENCH_KINDS) {
      const informer = makeInformer(kc, path, lists[kind] as never);
      informer.on('error', (e: unknown) => report({ event: 'informer-error', kind, kubeconfig: file, message: String(e) }));
      informers.push(informer);
    }
  }
  await Promise.all(informers.map((i) => i.start()));
  const objects = informers.reduce((n, i) => n + i.list().length, 0);
  report({ event: 'synced', ms: performance.now() - started, objects, informers: informers.length });
  // The benchmark gone (its stdin closed), nothing is left running.
  process.stdin.once('end', () => process.exit(0));
  commands({
    stop: () => {
      for (const i of informers) void i.stop();
      process.exit(0);
    },
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
