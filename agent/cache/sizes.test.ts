import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../shared/clock.ts';
import { createLogger } from '../../shared/log.ts';
import { startTestApiServer, type TestApiServer } from '../../test/kube/index.ts';
import { connectCluster, type ClusterClient } from '../clusters/index.ts';
import { SIZE_QUESTION_BUDGET_MS, expectedObjects, objectsOfFirstPage } from './sizes.ts';
import type { CacheScope, ResourceType } from './types.ts';

const TOKEN = 'sizes-test-token-0123456789abcdef';
const type = (kind: string, plural: string, group = '', version = 'v1'): ResourceType => ({ group, version, kind, plural, singular: kind.toLowerCase(), namespaced: true, verbs: ['list', 'watch'] });
const scope = (t: ResourceType, namespace = ''): CacheScope => ({ type: t, namespace });
const CONFIG_MAPS = type('ConfigMap', 'configmaps');
const SECRETS = type('Secret', 'secrets');
const DEPLOYMENTS = type('Deployment', 'deployments', 'apps');

let server: TestApiServer;
let cluster: ClusterClient;

beforeAll(async () => {
  server = await startTestApiServer({ tls: true, auth: { tokens: { [TOKEN]: { username: 'admin', groups: ['system:masters'] } } } });
  server.store.ensureNamespace('shop');
  server.store.ensureNamespace('web');
  for (let i = 0; i < 12; i++) server.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: i < 5 ? 'web' : 'shop' } });
  server.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'only', namespace: 'shop' } });
  const file = join(await mkdtemp(join(tmpdir(), 'sizes-')), 'kubeconfig.yml');
  await writeFile(file, server.kubeconfigYaml({ token: TOKEN }), { mode: 0o600 });
  cluster = await connectCluster(
    { account: 'acme', kubeConfigFile: file, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [] },
    { secrets: { resolveFile: async (v: string) => v }, kubernetesNoProxy: true, retries: { enabled: true, maxRetries: 3, backOffMs: 1, retryAnyError: true, retryableErrors: [] }, clock: systemClock, logger: createLogger({ level: 'silent' }) },
  );
});
afterAll(async () => {
  cluster.close();
  await server.close();
});

describe('objectsOfFirstPage', () => {
  it('adds the remaining count to the page, or takes a last page as the whole list', () => {
    expect(objectsOfFirstPage({ items: [{}], metadata: { continue: 'x', remainingItemCount: 19_999 } })).toBe(20_000);
    expect(objectsOfFirstPage({ items: [{}], metadata: {} })).toBe(1);
    expect(objectsOfFirstPage({ items: [], metadata: {} })).toBe(0);
    expect(objectsOfFirstPage({})).toBe(0);
  });

  it('says nothing when the server gives a continue token without a count (a selector, an older server)', () => {
    expect(objectsOfFirstPage({ items: [{}], metadata: { continue: 'x' } })).toBeUndefined();
    expect(objectsOfFirstPage({ items: [{}], metadata: { continue: 'x', remainingItemCount: -1 } })).toBeUndefined();
  });
});

describe('expectedObjects', () => {
  it('asks each scope for a list of one and counts what the API server says is left', async () => {
    server.requests.clear();
    const sizes = await expectedObjects(cluster, [scope(CONFIG_MAPS), scope(SECRETS), scope(DEPLOYMENTS), scope(CONFIG_MAPS, 'web')], { clock: systemClock, signal: new AbortController().signal });
    expect(sizes).toEqual([12, 1, 0, 5]);
    const asked = server.requests.log().filter((r) => r.verb === 'list');
    expect(asked).toHaveLength(4);
    expect(asked.every((r) => new URLSearchParams(r.query).get('limit') === '1' && !new URLSearchParams(r.query).has('resourceVersion'))).toBe(true);
  });

  it('leaves a scope unknown when its question fails, without retrying it', async () => {
    server.requests.clear();
    server.faults.fail({ verb: 'list', resource: 'secrets' }, 500, 1);
    const sizes = await expectedObjects(cluster, [scope(CONFIG_MAPS), scope(SECRETS)], { clock: systemClock, signal: new AbortController().signal });
    expect(sizes).toEqual([12, undefined]);
    expect(server.requests.count({ verb: 'list', resource: 'secrets' })).toBe(1);
  });

  it('stops waiting after its budget: what has not answered stays unknown', async () => {
    server.faults.hang({ verb: 'list', resource: 'secrets' });
    const clock = new ManualClock(0);
    const asking = expectedObjects(cluster, [scope(CONFIG_MAPS), scope(SECRETS)], { clock, signal: new AbortController().signal });
    // The config maps answer; the secrets never do.
    await new Promise((r) => setTimeout(r, 300));
    await clock.advance(SIZE_QUESTION_BUDGET_MS);
    expect(await asking).toEqual([12, undefined]);
    server.faults.clear();
  });
});
