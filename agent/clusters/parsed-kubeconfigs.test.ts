/**
 * The parse of a kubeconfig is kept by content (parsed-kubeconfigs.ts): accounts on one cluster
 * share it, a changed file is parsed again, every check runs on every load, and what one client's
 * configuration changes reaches no other. Against the test API server over TLS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { createLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import type { KubeconfigPolicy } from './assigned-kubeconfig.ts';
import { connectCluster, loadClusterConfig, type ClusterSpec, type ConnectDeps } from './index.ts';
import { kubeconfigParses } from './parsed-kubeconfigs.ts';

const TOKEN = 'parsed-kubeconfig-test-token-0123456789';
let server: TestApiServer;
let dir: string;
let policy: KubeconfigPolicy;

beforeAll(async () => {
  server = await startTestApiServer({ tls: true, auth: { tokens: { [TOKEN]: { username: 'admin', groups: ['system:masters'] } } } });
  dir = await mkdtemp(join(tmpdir(), 'parsed-kubeconfigs-'));
  policy = { kubeconfigDirs: [dir], execCommands: [], secretReferences: [] };
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const deps: ConnectDeps = {
  secrets: { resolveFile: async (value: string) => value },
  kubernetesNoProxy: false,
  retries: { enabled: false, maxRetries: 1, backOffMs: 1, retryAnyError: false, retryableErrors: [] },
  clock: systemClock,
  logger: createLogger({ level: 'silent' }),
};

function spec(account: string, file: string, over: Partial<ClusterSpec> = {}): ClusterSpec {
  return { account, kubeConfigFile: file, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [], policy, ...over };
}

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text, { mode: 0o600 });
  return path;
}

describe('kubeconfigs parsed once per content', () => {
  it('two accounts on one cluster parse its kubeconfig once, and both reach the cluster', async () => {
    const path = await file('shared.yml', server.kubeconfigYaml({ token: TOKEN, name: 'shared' }));
    const before = kubeconfigParses();
    const a = await connectCluster(spec('a', path), deps);
    const b = await connectCluster(spec('b', path), deps);
    try {
      expect(kubeconfigParses()).toBe(before + 1);
      expect((await a.version()).gitVersion).toMatch(/^v/);
      expect((await b.version()).gitVersion).toMatch(/^v/);
    } finally {
      a.close();
      b.close();
    }
  });

  it('a changed kubeconfig is parsed again, and the new client uses what it now says', async () => {
    const path = await file('changing.yml', server.kubeconfigYaml({ token: TOKEN, name: 'changing' }));
    const old = await connectCluster(spec('old', path), deps);
    const before = kubeconfigParses();
    await writeFile(path, server.kubeconfigYaml({ token: 'a-token-the-server-refuses-0000000', name: 'changing' }));
    const changed = await connectCluster(spec('new', path), deps);
    try {
      expect(kubeconfigParses()).toBe(before + 1);
      await expect(changed.version()).rejects.toThrow(/401|Unauthorized/i);
      expect((await old.version()).gitVersion).toMatch(/^v/);
    } finally {
      old.close();
      changed.close();
    }
  });

  it('checks every load again: the same contents are refused once the policy no longer allows their folder', async () => {
    const path = await file('checked.yml', server.kubeconfigYaml({ token: TOKEN, name: 'checked' }));
    await loadClusterConfig(spec('allowed', path), deps);
    const elsewhere: KubeconfigPolicy = { ...policy, kubeconfigDirs: [join(dir, 'other')] };
    await expect(loadClusterConfig(spec('refused', path, { policy: elsewhere }), deps)).rejects.toThrow(/kubeconfigDirs/);
  });

  it('what one load changes in its configuration reaches no other load of the same file', async () => {
    const path = await file('insecure.yml', server.kubeconfigYaml({ token: TOKEN, name: 'insecure' }));
    const insecure = await loadClusterConfig(spec('insecure', path, { insecure: true }), deps);
    expect(insecure.kubeConfig.getCurrentCluster()?.skipTLSVerify).toBe(true);
    // As client-node's auth providers do with the tokens they fetch: written into the user in place.
    (insecure.kubeConfig.getCurrentUser() as { token?: string }).token = 'written-by-one-client';
    const strict = await loadClusterConfig(spec('strict', path), deps);
    expect(strict.kubeConfig.getCurrentCluster()?.skipTLSVerify).toBe(false);
    expect(strict.kubeConfig.getCurrentUser()?.token).toBe(TOKEN);
  });
});
