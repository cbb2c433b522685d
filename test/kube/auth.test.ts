import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateAuthority, startTestApiServer, type TestApiServer } from './index.ts';
import { raw } from './http-client.test-helper.ts';

let server: TestApiServer;

beforeAll(async () => {
  server = await startTestApiServer({
    tls: true,
    auth: { tokens: { 'admin-token': { username: 'alice', groups: ['admins'] }, 'viewer-token': 'bob' }, clientCertificates: true },
    authorize: (user, a) => user.groups.includes('admins') || user.groups.includes('system:masters') || (a.verb !== 'create' && a.verb !== 'delete'),
  });
});
afterAll(async () => {
  await server.close();
});

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

describe('TLS and authentication', () => {
  it('serves HTTPS with a certificate for 127.0.0.1 signed by its CA', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await raw(server.url, '/api/v1/namespaces', { ca: server.ca, headers: { authorization: 'Bearer admin-token' } });
    expect(res.status).toBe(200);
    await expect(raw(server.url, '/api/v1/namespaces', { headers: { authorization: 'Bearer admin-token' } })).rejects.toThrow();
  });

  it('accepts known bearer tokens and answers 401 Unauthorized for unknown, malformed or missing ones', async () => {
    expect((await raw(server.url, '/api/v1/pods', { ca: server.ca, headers: { authorization: 'Bearer viewer-token' } })).status).toBe(200);
    for (const headers of [{ authorization: 'Bearer wrong' }, { authorization: 'Basic YTpi' }, {}] as Record<string, string>[]) {
      const res = await raw(server.url, '/api/v1/pods', { ca: server.ca, headers });
      expect(res.status).toBe(401);
      expect(res.json).toEqual(UNAUTHORIZED);
    }
    expect((await raw(server.url, '/version', { ca: server.ca })).status).toBe(401);
    expect((await raw(server.url, '/readyz', { ca: server.ca })).status).toBe(200);
  });

  it('accepts client certificates from its CA (CN user, O groups) and refuses others with 401', async () => {
    const admin = server.issueClientCertificate('carol', ['admins']);
    const created = await raw(server.url, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'by-cert' } }, ca: server.ca, ...admin });
    expect(created.status).toBe(201);
    expect(server.requests.log().at(-1)).toMatchObject({ user: 'carol', verb: 'create', resource: 'namespaces', code: 201 });

    const stranger = createCertificateAuthority('other-ca').issue({ commonName: 'mallory', organizations: ['admins'] });
    const res = await raw(server.url, '/api/v1/namespaces', { ca: server.ca, ...stranger });
    expect(res.status).toBe(401);
    expect(res.json).toEqual(UNAUTHORIZED);
  });

  it('reads a kube-apiserver static token file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokens-'));
    const file = join(dir, 'tokens.csv');
    writeFileSync(file, '# static tokens\nfile-token,erin,u-1,"ops,admins"\nplain-token,frank,u-2\n');
    const fromFile = await startTestApiServer({ auth: { tokenFile: file } });
    try {
      expect((await raw(fromFile.url, '/api/v1/pods', { headers: { authorization: 'Bearer file-token' } })).status).toBe(200);
      expect(fromFile.requests.log().at(-1)?.user).toBe('erin');
      expect((await raw(fromFile.url, '/api/v1/pods', { headers: { authorization: 'Bearer plain-token' } })).status).toBe(200);
      expect((await raw(fromFile.url, '/api/v1/pods', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    } finally {
      await fromFile.close();
    }
    writeFileSync(file, 'only-a-token\n');
    await expect(startTestApiServer({ auth: { tokenFile: file } })).rejects.toThrow(/line 1/);
  });

  it('answers 403 with the RBAC message when the authorizer says no', async () => {
    const res = await raw(server.url, '/api/v1/namespaces/default/configmaps', {
      method: 'POST', ca: server.ca, headers: { authorization: 'Bearer viewer-token' },
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
    });
    expect(res.status).toBe(403);
    expect(res.json).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: 'configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default"',
      reason: 'Forbidden', details: { kind: 'configmaps' }, code: 403,
    });
    const named = await raw(server.url, '/apis/apps/v1/namespaces/default/deployments/web', { method: 'DELETE', ca: server.ca, headers: { authorization: 'Bearer viewer-token' } });
    expect(named.json).toMatchObject({ message: 'deployments.apps "web" is forbidden: User "bob" cannot delete resource "deployments" in API group "apps" in the namespace "default"', details: { name: 'web', group: 'apps', kind: 'deployments' } });
  });

  it('lets anonymous requests, when allowed, read /version but not discovery, as the default roles do', async () => {
    const open = await startTestApiServer({ auth: { tokens: { t: 'someone' }, anonymous: true } });
    try {
      expect((await raw(open.url, '/version')).status).toBe(200);
      const refused = await raw(open.url, '/apis');
      expect(refused.status).toBe(403);
      expect(refused.json).toEqual({
        kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'forbidden: User "system:anonymous" cannot get path "/apis"', reason: 'Forbidden', details: {}, code: 403,
      });
      expect((await raw(open.url, '/apis', { headers: { authorization: 'Bearer t' } })).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('writes kubeconfigs with the CA and a token or a client certificate', () => {
    const byToken = server.kubeconfig({ token: 'viewer-token', namespace: 'default' });
    expect(byToken).toMatchObject({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'test',
      clusters: [{ name: 'test', cluster: { server: server.url, 'certificate-authority-data': Buffer.from(server.ca ?? '').toString('base64') } }],
      users: [{ name: 'test', user: { token: 'viewer-token' } }],
      contexts: [{ name: 'test', context: { cluster: 'test', user: 'test', namespace: 'default' } }],
    });
    const byCert = server.kubeconfig({ user: { username: 'dave', groups: ['admins'] } });
    expect(Object.keys(byCert.users[0]?.user ?? {})).toEqual(['client-certificate-data', 'client-key-data']);
    expect(server.kubeconfigYaml()).toContain('token: admin-token');
  });
});
