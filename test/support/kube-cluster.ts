import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectCluster, type ClusterClient, type RetrySettings } from '../../agent/clusters/index.ts';
import { systemClock } from '../../shared/clock.ts';
import { createLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer, type TestApiServerOptions } from '../kube/index.ts';

export const NO_RETRIES: RetrySettings = { enabled: false, maxRetries: 1, backOffMs: 1, retryAnyError: false, retryableErrors: [] };

export interface KubeCluster {
  kube: TestApiServer;
  /** An agent's client of the test API server, for account `prod`, through a kubeconfig file. */
  cluster: ClusterClient;
  kubeconfigPath: string;
  close(): Promise<void>;
}

/** A TLS test API server (client-node refuses plain HTTP) and an agent's client of it. */
export async function startKubeCluster(options: TestApiServerOptions = {}, retries: RetrySettings = NO_RETRIES): Promise<KubeCluster> {
  const kube = await startTestApiServer({ tls: true, ...options });
  const dir = await mkdtemp(join(tmpdir(), 'kube-cluster-'));
  const kubeconfigPath = kube.writeKubeconfig(join(dir, 'kubeconfig'));
  const cluster = await connectCluster(
    { account: 'prod', kubeConfigFile: kubeconfigPath, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] },
    { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: false, retries, clock: systemClock, logger: createLogger({ level: 'silent' }) },
  );
  return {
    kube,
    cluster,
    kubeconfigPath,
    close: async () => {
      cluster.close();
      await kube.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
