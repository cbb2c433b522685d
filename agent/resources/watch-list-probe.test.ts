import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadClusterConfig } from '../clusters/kubeconfig.ts';
import type { ClusterClient } from '../clusters/index.ts';
import { WatchListProbes } from './watch-list-probe.ts';

const dir = mkdtempSync(join(tmpdir(), 'probe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function kubeconfig(server: string, token: string): string {
  const path = join(dir, `${++files}.kubeconfig`);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

async function identityOf(path: string): Promise<string | undefined> {
  const spec = { account: `a${files}`, kubeConfigFile: path, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] };
  return (await loadClusterConfig(spec, { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: false })).identity;
}

const client = (identity?: string) => ({ account: 'a', server: 'https://k', ...(identity === undefined ? {} : { identity }) }) as ClusterClient;

describe('what is learnt of a cluster is shared by the accounts on it', () => {
  it('one record per server and user: the same for two kubeconfig files alike, another for another user or server', async () => {
    const one = await identityOf(kubeconfig('https://k:6443', 'token-of-one-user-0001'));
    expect(one).toMatch(/^[0-9a-f]{64}$/);
    expect(await identityOf(kubeconfig('https://k:6443', 'token-of-one-user-0001'))).toBe(one);
    expect(await identityOf(kubeconfig('https://k:6443', 'token-of-another-user-02'))).not.toBe(one);
    expect(await identityOf(kubeconfig('https://other:6443', 'token-of-one-user-0001'))).not.toBe(one);
  });

  it('shares a WatchList record between clients of one identity only; a client without one keeps its own', () => {
    const probes = new WatchListProbes();
    expect(probes.of(client('x'))).toBe(probes.of(client('x')));
    expect(probes.of(client('x'))).not.toBe(probes.of(client('y')));
    const anonymous = client();
    expect(probes.of(anonymous)).toBe(probes.of(anonymous));
    expect(probes.of(anonymous)).not.toBe(probes.of(client()));
    expect(new WatchListProbes().of(client('x'))).not.toBe(probes.of(client('x')));
  });
});
