/**
 * Connections to cluster API servers: `connectCluster()` loads an account's configuration and
 * returns a client that applies the account's credentials, TLS, proxy and `kubernetes.retries.*`.
 */
import { createClusterClient, type ClusterClientDeps } from './client.ts';
import { loadClusterConfig, type ClusterConfigDeps } from './kubeconfig.ts';
import type { ClusterClient, ClusterSpec } from './types.ts';

export type ConnectDeps = ClusterConfigDeps & ClusterClientDeps;

/** Loads `spec`'s configuration and builds its client. Throws `invalid_input` for a bad kubeconfig. */
export async function connectCluster(spec: ClusterSpec, deps: ConnectDeps): Promise<ClusterClient> {
  const loaded = await loadClusterConfig(spec, deps);
  deps.logger.debug({ account: spec.account, server: loaded.server, proxy: loaded.proxy.proxy ?? 'none', route: loaded.proxy.reason }, 'cluster configuration loaded');
  return createClusterClient(spec.account, loaded, deps);
}

export { createClusterClient } from './client.ts';
export { splitLines } from './lines.ts';
export type { ClusterClientDeps } from './client.ts';
export { kubeErrorStatus } from './errors.ts';
export { loadClusterConfig, SERVICE_ACCOUNT_DIR } from './kubeconfig.ts';
export type { ClusterConfigDeps, InClusterSource, LoadedCluster } from './kubeconfig.ts';
export { isRetryable, triesAllowed, withRetries } from './retry.ts';
export { DEFAULT_RETRY_SETTINGS } from './types.ts';
export type { ClusterClient, ClusterSpec, KubeRequest, KubeResponse, KubeStream, QueryValue, RetrySettings, ServerVersion } from './types.ts';
