import { mkdtempSync, rmSync } from 'node:fs';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { silentLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import { DEFAULT_RETRY_SETTINGS, connectCluster } from './index.ts';

describe('the TLS context of a cluster client', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tls-context-'));
  let kube: TestApiServer;

  beforeAll(async () => {
    kube = await startTestApiServer({ tls: true });
  });
  afterAll(async () => {
    await kube.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is made once per agent of the client, not once per connection: ten watches share one', async () => {
    const path = join(dir, 'kubeconfig');
    kube.writeKubeconfig(path, { user: { username: 'admin', groups: ['system:masters'] } });
    const cluster = await connectCluster(
      { account: 'a', kubeConfigFile: path, context: '', serviceAccount: false, insecure: false, noProxy: true, oAuthScopes: [] },
      { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: true, retries: DEFAULT_RETRY_SETTINGS, clock: systemClock, logger: silentLogger() },
    );
    const made = vi.spyOn(tls, 'createSecureContext');
    const stop = new AbortController();
    try {
      const watches = await Promise.all(Array.from({ length: 10 }, () => cluster.stream({ path: '/api/v1/configmaps', query: { watch: 1 }, signal: stop.signal })));
      expect((await cluster.request({ path: '/api/v1/namespaces' })).status).toBe(200);
      expect(kube.requests.inFlight({ verb: 'watch', resource: 'configmaps' })).toBe(10);
      // One for the watches' agent, one for the agent of other requests.
      expect(made.mock.calls.length).toBeLessThanOrEqual(2);
      for (const w of watches) w.close();
    } finally {
      stop.abort();
      made.mockRestore();
      cluster.close();
    }
  });
});
