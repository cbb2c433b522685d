import { type ClusterBinaries, findClusterBinaries } from './binaries.ts';
import { type RealCluster, startRealCluster } from './real-server.ts';
import type { ClusterTarget, TargetProvider } from './target.ts';

/** The real kube-apiserver (with etcd) as a scenario target, found by `findClusterBinaries()`. */
export function realKubeApiserver(binaries: ClusterBinaries = findClusterBinaries()): TargetProvider {
  return {
    name: 'kube-apiserver',
    availability: () => (binaries.available ? { available: true } : { available: false, reason: binaries.reason }),
    async start() {
      if (!binaries.available) throw new Error(binaries.reason);
      const cluster = await startRealCluster(binaries);
      const target = realClusterTarget(cluster, binaries.source);
      return { target, close: () => cluster.close() };
    },
  };
}

/** A running real cluster as a scenario target: its address, CA, credentials and history knob. */
export function realClusterTarget(cluster: RealCluster, source: string): ClusterTarget {
  return {
    name: `kube-apiserver (${source})`,
    url: cluster.url,
    tls: { caCert: cluster.caCert },
    auth: {
      admin: { kind: 'token', token: cluster.adminToken },
      adminCert: { kind: 'clientCert', cert: cluster.clientCert, key: cluster.clientKey },
      unprivileged: { kind: 'token', token: cluster.unprivilegedToken, user: cluster.unprivilegedUser },
    },
    knobs: {
      // etcd compaction expires continue tokens and exact-version lists; the watch cache keeps
      // its own window of events in memory (75 s at least), which only a restart empties.
      async expireHistory() {
        await cluster.compactEtcd();
        await cluster.restartApiServer();
      },
    },
  };
}
