import type { KubeConfig } from '@kubernetes/client-node';
import { getProxyForUrl } from 'proxy-from-env';

/**
 * Whether a connection goes through a proxy (docs/agent-config.md#proxies): HTTP_PROXY, HTTPS_PROXY and NO_PROXY (either
 * case) decide, unless a `noProxy` option bypasses them for the driver (`driver.noProxy`), for every
 * cluster (`kubernetes.noProxy`) or for one account (`kubernetes.accounts[].noProxy`).
 */
export interface ProxyDecision {
  /** The proxy URL, or undefined for a direct connection. */
  proxy: string | undefined;
  /** Why, for the log line that says how the agent connects. */
  reason: string;
}

const PROXY_VARIABLES = ['http_proxy', 'https_proxy', 'no_proxy'] as const;

/**
 * grpc-js reads only the lower-case variables, so the upper-case ones are copied to the lower-case
 * names that are unset. Called once when the agent starts; returns the names it set.
 */
export function normalizeProxyEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const set: string[] = [];
  for (const name of PROXY_VARIABLES) {
    const upper = env[name.toUpperCase()];
    if (env[name] === undefined && upper !== undefined) {
      env[name] = upper;
      set.push(name);
    }
  }
  return set;
}

function fromEnvironment(url: string): ProxyDecision {
  const proxy = getProxyForUrl(url);
  return proxy === '' ? { proxy: undefined, reason: 'no proxy variable applies to this host' } : { proxy, reason: 'proxy environment variables' };
}

/** The decision for the driver at `driver.grpc` (host:port); TLS unless `driver.insecure`. */
export function driverProxy(driver: { grpc: string; insecure: boolean; noProxy: boolean }): ProxyDecision {
  if (driver.noProxy) return { proxy: undefined, reason: 'driver.noProxy is true' };
  return fromEnvironment(`${driver.insecure ? 'http' : 'https'}://${driver.grpc}`);
}

/** The decision for a cluster API server URL (`https://...` from the kubeconfig). */
export function clusterProxy(server: string, options: { kubernetesNoProxy: boolean; accountNoProxy: boolean; kubeconfigProxyUrl?: string | undefined }): ProxyDecision {
  // A proxy-url written in the kubeconfig is the operator's explicit choice for that cluster.
  if (options.kubeconfigProxyUrl) return { proxy: options.kubeconfigProxyUrl, reason: 'proxy-url of the kubeconfig cluster' };
  if (options.kubernetesNoProxy) return { proxy: undefined, reason: 'kubernetes.noProxy is true' };
  if (options.accountNoProxy) return { proxy: undefined, reason: 'noProxy of the account is true' };
  return fromEnvironment(server);
}

/**
 * Applies the decision to the current cluster of a KubeConfig: client-node does not read the proxy
 * variables, it only uses a cluster's `proxyUrl`. Call before the first request (client-node caches
 * its connection agent per cluster).
 */
export function applyClusterProxy(kc: KubeConfig, options: { kubernetesNoProxy: boolean; accountNoProxy: boolean }): ProxyDecision {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) return { proxy: undefined, reason: 'the kubeconfig has no current cluster' };
  const decision = clusterProxy(cluster.server, { ...options, kubeconfigProxyUrl: cluster.proxyUrl });
  kc.clusters = kc.clusters.map((c) => {
    if (c.name !== cluster.name) return c;
    const { proxyUrl: _ignored, ...rest } = c;
    return decision.proxy === undefined ? rest : { ...rest, proxyUrl: decision.proxy };
  });
  return decision;
}
