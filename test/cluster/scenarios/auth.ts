import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'vitest';
import { kubeRequest } from '../http.ts';
import { makeClusterPki } from '../../support/pki.ts';
import { kubeConfigFor } from '../target.ts';
import { type Scenario, client, createNamespace, expectHttp, expectStatusBody, unique } from './kube.ts';

const UNAUTHORIZED = { code: 401, reason: 'Unauthorized', message: 'Unauthorized' };

export const authScenarios: Scenario[] = [
  {
    name: 'auth: a bearer token and a client certificate both authenticate, raw and through @kubernetes/client-node',
    async run(target) {
      const ns = unique('auth');
      await createNamespace(client(target), ns);
      await client(target, target.auth.admin).expect(200, `/api/v1/namespaces/${ns}/configmaps`);
      await client(target, target.auth.adminCert).expect(200, `/api/v1/namespaces/${ns}/configmaps`);
      for (const credentials of [target.auth.admin, target.auth.adminCert]) {
        const core = kubeConfigFor(target, credentials).makeApiClient(CoreV1Api);
        expect((await core.listNamespacedConfigMap({ namespace: ns })).items).toEqual([]);
      }
    },
  },
  {
    name: 'auth: a bad token and a certificate from an unknown CA are 401; an unprivileged user and no credentials are 403',
    async run(target) {
      const ns = unique('refused');
      await createNamespace(client(target), ns);
      const path = `/api/v1/namespaces/${ns}/configmaps`;

      const badToken = await kubeRequest(target, { kind: 'token', token: 'not-a-token' }, path);
      expectHttp(badToken, 401, 'bad token');
      expectStatusBody(badToken.body, UNAUTHORIZED);

      const dir = await mkdtemp(join(tmpdir(), 'vendor-rogue-'));
      try {
        const rogue = await makeClusterPki(dir);
        const cert = { kind: 'clientCert' as const, cert: await readFile(rogue.clientCert, 'utf8'), key: await readFile(rogue.clientKey, 'utf8') };
        const res = await kubeRequest(target, cert, path);
        expectHttp(res, 401, 'certificate of an unknown CA');
        expectStatusBody(res.body, UNAUTHORIZED);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

      // Authenticated but not authorized: the message names the user, verb, resource and scope.
      const nobody = await kubeRequest(target, target.auth.unprivileged, path);
      expectHttp(nobody, 403, 'unprivileged user');
      expectStatusBody(nobody.body, {
        code: 403,
        reason: 'Forbidden',
        message: `configmaps is forbidden: User "${target.auth.unprivileged.user}" cannot list resource "configmaps" in API group "" in the namespace "${ns}"`,
        details: { kind: 'configmaps' },
      });
      const anonymous = await kubeRequest(target, { kind: 'anonymous' }, '/api/v1/namespaces');
      expectHttp(anonymous, 403, 'no credentials');
      expectStatusBody(anonymous.body, {
        code: 403,
        reason: 'Forbidden',
        message: 'namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope',
        details: { kind: 'namespaces' },
      });
      // Every authenticated user may read discovery; anonymous requests only /version and the health paths.
      await client(target, target.auth.unprivileged).expect(200, '/apis');
      const anonymousDiscovery = await kubeRequest(target, { kind: 'anonymous' }, '/api');
      expectHttp(anonymousDiscovery, 403, 'discovery without credentials');
      expectStatusBody(anonymousDiscovery.body, { code: 403, reason: 'Forbidden', message: 'forbidden: User "system:anonymous" cannot get path "/api"', details: {} });
      expectHttp(await kubeRequest(target, { kind: 'anonymous' }, '/version'), 200, '/version without credentials');
      // client-node reports the refusal with its status code.
      const core = kubeConfigFor(target, { kind: 'token', token: 'not-a-token' }).makeApiClient(CoreV1Api);
      await expect(core.listNamespacedConfigMap({ namespace: ns })).rejects.toMatchObject({ code: 401 });
    },
  },
];
