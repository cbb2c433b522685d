/**
 * Connections to cluster API servers: `connectCluster()` loads an account's configuration and
 * returns a client that applies the account's credentials, TLS, proxy and `kubernetes.retries.*`.
 */
import { createClusterClient, type ClusterClientDeps } from './client.ts';
import { kubeconfigUnusable } from './errors.ts';
import { loadClusterConfig, type ClusterConfigDeps } from './kubeconfig.ts';
import type { ClusterClient, ClusterSpec } from './types.ts';

export type ConnectDeps = ClusterConfigDeps & ClusterClientDeps;

/** A proxy URL for a log line: its user and password (from a `proxy-url` or the environment) left out. */
function withoutCredentials(proxy: string | undefined): string {
  if (proxy === undefined) return 'none';
  if (!URL.canParse(proxy)) return '(not a URL)';
  const url = new URL(proxy);
  if (url.username === '' && url.password === '') return proxy;
  url.username = '';
  url.password = '';
  return url.toString();
}

/**
 * Loads `spec`'s configuration and builds its client. A configuration that cannot be loaded (a
 * missing, refused or malformed kubeconfig, a secret that cannot be resolved) is a `VendorError`
 * that `isKubeconfigUnusable` (errors.ts) recognises, with the reason in its message.
 */
export async function connectCluster(spec: ClusterSpec, deps: ConnectDeps): Promise<ClusterClient> {
  let loaded;
  try {
    loaded = await loadClusterConfig(spec, deps);
  } catch (e) {
    throw kubeconfigUnusable(spec.account, e);
  }
  deps.logger.debug({ account: spec.account, server: loaded.server, proxy: withoutCredentials(loaded.proxy.proxy), route: loaded.proxy.reason }, 'cluster configuration loaded');
  return createClusterClient(spec.account, loaded, deps);
}

export { createClusterClient } from './client.ts';
export { splitLines } from './lines.ts';
export type { ClusterClientDeps } from './client.ts';
export { isKubeconfigUnusable, kubeErrorStatus } from './errors.ts';
export { loadClusterConfig, SERVICE_ACCOUNT_DIR } from './kubeconfig.ts';
export type { KubeconfigPolicy } from './assigned-kubeconfig.ts';
export type { ClusterConfigDeps, InClusterSource, LoadedCluster } from './kubeconfig.ts';
export { isRetryable, triesAllowed, withRetries } from './retry.ts';
export { DEFAULT_RETRY_SETTINGS } from './types.ts';
export type { ClusterClient, ClusterSpec, KubeRequest, KubeResponse, KubeStream, QueryValue, RetrySettings, ServerVersion } from './types.ts';
