import { mkdtempSync, rmSync } from 'node:fs';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { silentLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import { DEFAULT_RETRY_SETTINGS, connectCluster } from './index.ts';
import { openPools } from './shared-agents.ts';
import type { ClusterClient } from './types.ts';

describe('clients of one cluster share their connections (docs/agent-config.md#driver-assigned-accounts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shared-agents-'));
  let kube: TestApiServer;

  beforeAll(async () => {
    kube = await startTestApiServer({ tls: true });
  });
  afterAll(async () => {
    await kube.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = (account: string, path: string): Promise<ClusterClient> =>
    connectCluster(
      { account, kubeConfigFile: path, context: '', serviceAccount: false, insecure: false, noProxy: true, oAuthScopes: [] },
      { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: true, retries: DEFAULT_RETRY_SETTINGS, clock: systemClock, logger: silentLogger() },
    );

  it("a new account's check on a cluster another account holds opens no TLS connection; a different identity opens its own; the last close frees them", async () => {
    const admin = join(dir, 'admin');
    kube.writeKubeconfig(admin, { user: { username: 'admin', groups: ['system:masters'] } });
    const other = join(dir, 'other');
    kube.writeKubeconfig(other, { user: { username: 'other', groups: ['system:masters'] } });
    const pools = openPools();
    const first = await connect('a', admin);
    expect((await first.version()).gitVersion).toMatch(/^v/);
    const connects = vi.spyOn(tls, 'connect');
    try {
      const second = await connect('b', admin);
      expect((await second.version()).gitVersion).toMatch(/^v/);
      expect(connects).not.toHaveBeenCalled();
      expect(openPools()).toBe(pools + 1);
      // Another client certificate is another TLS identity: never the same connection.
      const third = await connect('c', other);
      await third.version();
      expect(connects).toHaveBeenCalledTimes(1);
      expect(openPools()).toBe(pools + 2);
      third.close();
      first.close();
      // The pool outlives the client that opened it while another holds it.
      expect((await second.request({ path: '/api/v1/namespaces' })).status).toBe(200);
      await expect(first.version()).rejects.toThrow(/closed/);
      second.close();
      expect(openPools()).toBe(pools);
    } finally {
      connects.mockRestore();
    }
  });
});
