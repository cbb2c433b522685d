/**
 * The attacker holds WRITE on an account limited to one namespace and reaches for the rest of the
 * cluster: a ClusterRoleBinding to cluster-admin, a ClusterRole, a Namespace not in the list,
 * deleting, patching and scaling a cluster-scoped object, a cluster-scoped custom resource the API
 * cannot know. The API refuses each (400, nothing stored); an operation that reaches the agent
 * without the API's check (written straight to the table, handed over by the driver through the
 * protocol) is refused again by the agent with the scope the cluster's discovery reports, and
 * nothing is applied; an agent's own static account keeps its file's limits even when a rogue
 * driver assigns it without them. Run against the real kube-apiserver and the test API server alike. Then open
 * accounts: without usable permissions, a caller with no roles reads them, and writes to them only
 * when `api.auth.openAccounts` is `readWrite`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, test, vi } from 'vitest';
import { createApp } from '../../functions/app.ts';
import { createApiAuth } from '../../functions/auth/authenticator.ts';
import type { AccountSettings } from '../../shared/accounts/settings.ts';
import { systemClock } from '../../shared/clock.ts';
import type { OpenAccountMode } from '../../shared/driver-config/api.ts';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import { requestHash } from '../../shared/operations/hash.ts';
import { operationMessage } from '../../shared/operations/message.ts';
import { parseOperationRequest, requestObjects, type OperationRequest } from '../../shared/operations/request.ts';
import type { OperationResult__Output } from '../../shared/protocol/messages.ts';
import { accountSettingsMessage } from '../../shared/accounts/settings-message.ts';
import { compress, createOperation, getOperation, operationIdOf } from '../../shared/table/operations/operations.ts';
import { putAgentStaticAccounts } from '../../shared/table/sources/agent-static.ts';
import { kubeRequest, type Json } from '../cluster/http.ts';
import { realKubeApiserver } from '../cluster/real-target.ts';
import { kubeConfigFor, type ClusterTarget, type StartedTarget, type TargetProvider } from '../cluster/target.ts';
import { testApiServer } from '../cluster/test-server-target.ts';
import { TEST_ADMIN_TOKEN, apiFixture } from '../support/api.ts';
import { WAIT, useAccountsWorld } from '../support/accounts-world.ts';
import { finished } from '../support/operations.ts';
import { TestIssuer, oidcConfig } from '../support/oidc.ts';

const world = useAccountsWorld();
let issuer: TestIssuer;
beforeAll(async () => {
  issuer = await TestIssuer.start();
  await issuer.addKey('ES256');
});
afterAll(() => issuer?.close());

/** A bearer token of an API caller holding these roles. */
/** The Idempotency-Key scope of an OIDC caller (docs/operations.md): its operations' ids derive from it. */
const scopeOf = (token: string): string => `oidc:${(JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub: string }).sub}`;
const caller = (...groups: string[]) => issuer.token({ sub: `user-${groups.join('-') || 'none'}`, groups, aud: 'vendor-api' });

const SETTLE = { timeout: 60_000, interval: 100 };
const RBAC = 'rbac.authorization.k8s.io/v1';
const PERMISSIONS = [{ READ: ['viewers'] }, { WRITE: ['shop-deployers'] }];
/** Limited to `shop`. */
const SHOP: AccountSettings = { name: 'shop', namespaces: ['shop'], permissions: PERMISSIONS };
/** Limited to `shop`, but may act on ClusterRoles. */
const SHOP_RBAC: AccountSettings = { name: 'shop-rbac', namespaces: ['shop'], clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io'], permissions: PERMISSIONS };

const takeOver = {
  apiVersion: RBAC,
  kind: 'ClusterRoleBinding',
  metadata: { name: 'take-over' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: 'shop' }],
};
const clusterRole = (name: string) => ({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name }, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
const seedRef = { apiVersion: RBAC, kind: 'ClusterRole', name: 'seed-reader' };

/** Each attack, the path its refusal names, and the kind it names. */
const ATTACKS: { name: string; body: Record<string, unknown>; path: string; kind: string }[] = [
  { name: 'a ClusterRoleBinding to cluster-admin', body: { action: 'deploy', manifests: [takeOver] }, path: 'manifests[0]', kind: 'ClusterRoleBinding.rbac.authorization.k8s.io "take-over"' },
  { name: 'a ClusterRole', body: { action: 'deploy', manifests: [clusterRole('escalated')] }, path: 'manifests[0]', kind: 'ClusterRole.rbac.authorization.k8s.io "escalated"' },
  {
    name: 'a Namespace not in the list, beside an allowed ConfigMap',
    body: { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cover', namespace: 'shop' } }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'elsewhere' } }] },
    path: 'manifests[1]',
    kind: 'namespace "elsewhere"',
  },
  { name: 'deleting a ClusterRole', body: { action: 'delete', targets: [seedRef] }, path: 'targets[0]', kind: 'ClusterRole.rbac.authorization.k8s.io "seed-reader"' },
  { name: 'patching a ClusterRole', body: { action: 'patch', target: seedRef, patchType: 'merge', patch: { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] } }, path: 'target', kind: 'ClusterRole.rbac.authorization.k8s.io "seed-reader"' },
  { name: 'scaling a ClusterRole', body: { action: 'scale', targets: [seedRef], replicas: 0 }, path: 'targets[0]', kind: 'ClusterRole.rbac.authorization.k8s.io "seed-reader"' },
];

/** A cluster-scoped custom resource: the API cannot tell its scope, the cluster's discovery can. */
const gate = { apiVersion: 'example.com/v1', kind: 'Gate', metadata: { name: 'open-all' }, spec: { everything: true } };
const gateCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gates.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Cluster',
    names: { plural: 'gates', singular: 'gate', kind: 'Gate', listKind: 'GateList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

for (const provider of [realKubeApiserver(), testApiServer('test API server')]) describeNamespaceAttacks(provider);

function describeNamespaceAttacks(provider: TargetProvider): void {
  const availability = provider.availability();
  if (!availability.available) {
    test(`${provider.name}: the real-cluster part did not run: ${availability.reason}`, () => {
      console.warn(`[namespaces] ${provider.name} did not run: ${availability.reason}`);
      expect(availability.reason.trim().length).toBeGreaterThan(0);
    });
    return;
  }

  describe(`a WRITE holder of an account limited to a namespace, against ${provider.name}`, () => {
    let started: StartedTarget | undefined;
    let dir: string;
    let kubeconfig: string;
    let seedVersion: string;
    const target = (): ClusterTarget => {
      if (started === undefined) throw new Error(`${provider.name} did not start`);
      return started.target;
    };

    /** A request to the cluster as its administrator (not through the control plane). */
    const kube = async (path: string, method = 'GET', body?: unknown): Promise<{ status: number; body: Json }> => {
      const res = await kubeRequest(target(), target().auth.adminCert, path, { method, ...(body === undefined ? {} : { body }) });
      return { status: res.status, body: res.body ?? {} };
    };
    const must = async (path: string, method = 'GET', body?: unknown): Promise<Json> => {
      const res = await kube(path, method, body);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const exists = async (path: string) => (await kube(path)).status === 200;
    const version = async (path: string) => ((await must(path)).metadata as { resourceVersion: string }).resourceVersion;

    /** What none of the attacks may leave behind. */
    const clusterUnchanged = async () => {
      expect(await exists(`/apis/${RBAC}/clusterrolebindings/take-over`)).toBe(false);
      expect(await exists(`/apis/${RBAC}/clusterroles/escalated`)).toBe(false);
      expect(await exists('/api/v1/namespaces/elsewhere')).toBe(false);
      expect(await exists('/api/v1/namespaces/shop/configmaps/cover')).toBe(false);
      expect(await exists('/apis/example.com/v1/gates/open-all')).toBe(false);
      expect(await version(`/apis/${RBAC}/clusterroles/seed-reader`)).toBe(seedVersion);
    };

    beforeAll(async () => {
      started = await provider.start();
      dir = mkdtempSync(join(tmpdir(), 'namespaces-'));
      kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, kubeConfigFor(target(), target().auth.admin).exportConfig(), { mode: 0o600 });
      await must('/api/v1/namespaces', 'POST', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
      await must(`/apis/${RBAC}/clusterroles`, 'POST', { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: 'seed-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
      seedVersion = await version(`/apis/${RBAC}/clusterroles/seed-reader`);
      await must('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', 'POST', gateCrd);
      await vi.waitFor(async () => expect((await kube('/apis/example.com/v1/gates')).status).toBe(200), SETTLE);
    }, 180_000);
    afterAll(async () => {
      await started?.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }, 180_000);

    /** The control plane with both accounts active on one agent, callers authenticated by OIDC. */
    async function serve(): Promise<void> {
      await world.fresh([SHOP, SHOP_RBAC]);
      const auth = createApiAuth({ oidc: oidcConfig(issuer), adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: false });
      world.app = createApp({ table: world.table, clock: systemClock, auth, operationEvents: world.operationEvents });
      const driver = await world.driver();
      await world.agent('agent-a', { target: `127.0.0.1:${driver.port}`, assignedAccounts: { kubeconfigDirs: [dir] } });
      await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
      for (const name of [SHOP.name, SHOP_RBAC.name]) {
        expect((await world.call('POST', '/vendor/accounts', [{ name, kubeconfigFile: kubeconfig }])).status).toBe(200);
        expect((await world.call('PATCH', '/vendor/accounts', [{ name, state: 'ACTIVE' }])).status).toBe(200);
        await vi.waitFor(async () => expect(await world.account(name)).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'agent-a' }] }), SETTLE);
      }
    }

    const submit = async (account: string, body: unknown, token: string, key = randomUUID()) => {
      const res = await world.app.request(`/vendor/accounts/${account}/operations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown>, stored: await getOperation(world.table, operationIdOf(account, scopeOf(token), key)) };
    };

    /** Stores the operation as the API would, but without the API's checks: only the agent's remain. */
    const straightToTable = async (account: string, body: unknown): Promise<string> => {
      const { request } = parseOperationRequest(body);
      const { record } = await createOperation(world.table, {
        account,
        submittedBy: 'oidc:straight-to-table',
        idempotencyKey: randomUUID(),
        requestHash: requestHash(account, request),
        request: compress(request),
        record: { action: request.action, objects: requestObjects(request).length },
        now: Date.now(),
      });
      return record.id;
    };

    it('is refused by the API for every attack: 400 naming the manifest or target and its kind, nothing stored, the cluster unchanged', async () => {
      await serve();
      const writer = await caller('shop-deployers');
      for (const attack of ATTACKS) {
        const refused = await submit(SHOP.name, attack.body, writer);
        expect(refused.status, attack.name).toBe(400);
        expect(refused.json, attack.name).toMatchObject({ code: 'invalid_input', errors: [{ path: attack.path, message: expect.stringContaining(attack.kind) }] });
        expect(refused.stored, attack.name).toBeUndefined();
      }
      // clusterScopedKinds names ClusterRole only: a ClusterRoleBinding stays refused there too.
      const binding = await submit(SHOP_RBAC.name, ATTACKS[0]?.body, writer);
      expect(binding.status).toBe(400);
      expect(binding.stored).toBeUndefined();
      await clusterUnchanged();
    });

    it("is refused by the agent's own check when an operation reaches it without the API's, with the scope discovery reports; nothing applied", async () => {
      await serve();
      for (const attack of ATTACKS) {
        const view = await finished(world.app, await straightToTable(SHOP.name, attack.body), 60);
        expect(view, attack.name).toMatchObject({ state: 'FAILED', agentId: 'agent-a' });
        const refused = view.outcomes.filter((o) => o.result === 'failed');
        expect(refused.map((o) => o.message), attack.name).toEqual([expect.stringContaining(attack.kind)]);
        expect(view.outcomes.every((o) => o.result === 'failed' || o.result === 'skipped'), attack.name).toBe(true);
      }
      await clusterUnchanged();

      // The API passes a custom kind whose scope only the cluster knows; the agent asks discovery and refuses it.
      const writer = await caller('shop-deployers');
      const passed = await submit(SHOP.name, { action: 'deploy', manifests: [gate] }, writer);
      expect(passed.status).toBe(202);
      const view = await finished(world.app, passed.json.id as string, 60);
      expect(view).toMatchObject({ state: 'FAILED', outcomes: [{ kind: 'Gate', result: 'failed', message: expect.stringContaining('Gate.example.com "open-all" is cluster-scoped') }] });
      await clusterUnchanged();
    });

    it("holds an agent's own static account to its own file's namespaces, whatever settings a rogue driver assigns it with", async () => {
      await world.fresh([]);
      const results: OperationResult__Output[] = [];
      const driver = await world.driver({ base: [], modules: [rogueDriver('own-shop', parseOperationRequest({ action: 'deploy', manifests: [takeOver] }).request, results)] });
      await world.agent('agent-own', { target: `127.0.0.1:${driver.port}`, accounts: [{ name: 'own-shop', kubeConfigFile: kubeconfig, namespaces: ['shop'] }] });
      await vi.waitFor(() => expect(results).toHaveLength(1), WAIT);
      expect(results[0]).toMatchObject({ operationId: 'rogue-1', ok: false, outcomes: [{ result: 'failed', message: expect.stringContaining('ClusterRoleBinding.rbac.authorization.k8s.io "take-over" is cluster-scoped') }] });
      await clusterUnchanged();
    });

    it('lets through the kinds clusterScopedKinds names, and Namespace objects named in namespaces', async () => {
      await serve();
      const writer = await caller('shop-deployers');
      const own = await submit(SHOP.name, { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', labels: { team: 'shop' } } }] }, writer);
      expect(own.status).toBe(202);
      expect(await finished(world.app, own.json.id as string, 60)).toMatchObject({ state: 'SUCCEEDED', outcomes: [{ kind: 'Namespace', result: 'configured' }] });
      expect(((await must('/api/v1/namespaces/shop')).metadata as { labels?: Record<string, string> }).labels).toMatchObject({ team: 'shop' });

      const role = await submit(SHOP_RBAC.name, { action: 'deploy', manifests: [clusterRole('shop-granted')] }, writer);
      expect(role.status).toBe(202);
      expect(await finished(world.app, role.json.id as string, 60)).toMatchObject({ state: 'SUCCEEDED', outcomes: [{ kind: 'ClusterRole', result: 'created' }] });
      expect(await exists(`/apis/${RBAC}/clusterroles/shop-granted`)).toBe(true);
      const removed = await submit(SHOP_RBAC.name, { action: 'delete', targets: [{ ...seedRef, name: 'shop-granted' }] }, writer);
      expect(await finished(world.app, removed.json.id as string, 60)).toMatchObject({ state: 'SUCCEEDED', outcomes: [{ result: 'deleted' }] });
    });
  });
}

describe('open accounts: no usable permissions', () => {
  const tables = () => world.tables;
  const ACCOUNTS: AccountSettings[] = [{ name: 'open' }, { name: 'spaced', permissions: [{ WRITE: ['release team'] }] }];
  const deploy = { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'shop' } }] };

  async function api(openAccounts: OpenAccountMode | undefined, production = false) {
    const auth = createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: ['vendor-admins'], ...(openAccounts === undefined ? {} : { openAccounts }) }, { production });
    const f = await apiFixture(tables(), [], { auth });
    // Accounts of an agent's own file need no activation: an operation on them is stored as soon as it is allowed.
    await putAgentStaticAccounts(f.table, 'agent-a', 'vendor-agent_infra', ACCOUNTS.map((a) => ({ ...a, serviceAccount: true })), f.clock.now());
    const post = async (account: string, token: string) => {
      const key = randomUUID();
      const res = await f.app.request(`/vendor/accounts/${account}/operations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify(deploy),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown>, stored: await getOperation(f.table, operationIdOf(account, scopeOf(token), key)) };
    };
    return { ...f, post };
  }

  it('readOnly: a caller without roles reads them but cannot write (403, nothing stored); a manager still writes', async () => {
    const f = await api('readOnly');
    const nobody = await caller();
    for (const account of ['open', 'spaced']) {
      expect((await f.call('GET', `/vendor/accounts/${account}`, undefined, nobody)).status, account).toBe(200);
      expect((await f.call('GET', `/vendor/accounts/${account}/resources`, undefined, nobody)).status, account).toBe(200);
      const refused = await f.post(account, nobody);
      expect(refused.status, account).toBe(403);
      expect(refused.json, account).toMatchObject({ code: 'forbidden', detail: expect.stringContaining('only account managers may write to it') });
      expect(refused.stored, account).toBeUndefined();
      expect((await f.post(account, await caller('vendor-admins'))).status, account).toBe(202);
    }
    expect(names((await f.call('GET', '/vendor/accounts', undefined, nobody)).json)).toEqual(['open', 'spaced']);
  });

  it('readWrite: a caller without roles reads and writes them', async () => {
    const f = await api('readWrite');
    const nobody = await caller();
    for (const account of ['open', 'spaced']) {
      expect((await f.call('GET', `/vendor/accounts/${account}`, undefined, nobody)).status, account).toBe(200);
      const written = await f.post(account, nobody);
      expect(written.status, account).toBe(202);
      expect(written.stored, account).toMatchObject({ state: 'QUEUED' });
    }
  });

  it('defaults to readOnly in production mode and to readWrite elsewhere', async () => {
    const nobody = await caller();
    expect((await (await api(undefined, true)).post('open', nobody)).status).toBe(403);
    expect((await (await api(undefined, false)).post('open', nobody)).status).toBe(202);
  });
});

/**
 * A driver that assigns an agent's static account with none of its limits (settings at their
 * defaults: no namespaces) and, once the agent holds it, hands it `request`.
 */
function rogueDriver(account: string, request: OperationRequest, results: OperationResult__Output[]): DriverModuleFactory {
  return () => ({
    name: 'rogue',
    handlers: {
      assignmentResult: ({ body }, session) => {
        if (body.account === account && body.ok) void session.send({ kind: 'operation', body: operationMessage('rogue-1', account, 1, 0, request) });
      },
      operationResult: ({ body }) => void results.push(body),
    },
    onSessionOpen(session) {
      const settings = accountSettingsMessage({});
      void session.send({ kind: 'assignAccount', body: { account, generation: 1, kubeconfigRef: '', settings, caching: false, cachingEpoch: 0, zoneId: session.zone, staticAccount: true } });
    },
  });
}

function names(json: Record<string, unknown>): string[] {
  return (json.items as { name: string }[]).map((a) => a.name);
}
