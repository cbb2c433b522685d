import { describe, expect, it } from 'vitest';
import { adminTokenAuth } from '../test/support/api.ts';
import { createApp } from './app.ts';
import { openApiDocument } from './openapi.ts';

// Route checks need no table: nothing here touches it.
const app = createApp({ table: { client: null as never, tableName: 'unused' }, auth: adminTokenAuth() });

function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:[^/]+/g, '{}').replace(/\{[^}]+\}/g, '{}')}`;
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and serves at /openapi.json', async () => {
    const res = await app.request('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
  });

  it('describes exactly the registered routes', () => {
    const registered = new Set(
      app.routes.filter((r) => r.method !== 'ALL').map((r) => routeKey(r.method, r.path)),
    );
    const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => routeKey(method, path))),
    );
    expect([...documented].sort()).toEqual([...registered].sort());
  });

  it('takes request and response shapes from the valibot schemas', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, { items?: { properties?: Record<string, unknown>; required?: string[]; additionalProperties?: boolean }; properties?: Record<string, unknown>; maxItems?: number }> } };
    const activation = doc.components.schemas.ActivationBatch;
    expect(activation?.maxItems).toBe(1000);
    expect(activation?.items?.required).toEqual(['name', 'state']);
    expect(activation?.items?.additionalProperties).toBe(false);
    expect(Object.keys(activation?.items?.properties ?? {})).toEqual(['name', 'zoneId', 'kubeconfigFile', 'kubeConfigFile', 'state']);
    expect(Object.keys(doc.components.schemas.Account?.properties ?? {})).toEqual([
      'name', 'type', 'source', 'config', 'zoneId', 'agents', 'lastAssignmentMsg', 'state', 'permissionsIgnored', 'permissionsIgnoredReason',
    ]);
    expect(Object.keys(doc.components.schemas.AccountPage?.properties ?? {})).toEqual(['items', 'page', 'limit', 'total']);
  });

  it('describes operation requests per action and the operation served', () => {
    const doc = openApiDocument() as { components: { schemas: Record<string, { oneOf?: { properties?: Record<string, { const?: string }>; required?: string[] }[]; properties?: Record<string, unknown> }> } };
    const actions = (doc.components.schemas.OperationRequest?.oneOf ?? []).map((s) => s.properties?.action?.const);
    expect(actions).toEqual(['deploy', 'delete', 'scale', 'patch', 'rolloutRestart', 'rolloutUndo']);
    expect(doc.components.schemas.OperationRequest?.oneOf?.[0]?.required).toEqual(['action', 'manifests']);
    expect(Object.keys(doc.components.schemas.Operation?.properties ?? {})).toEqual(expect.arrayContaining(['id', 'state', 'outcomes', 'createdAt', 'finishedAt']));
  });

  it('says how callers authenticate and what each refusal looks like', () => {
    type Op = { security?: unknown[]; responses: Record<string, unknown> };
    const doc = openApiDocument() as {
      security: unknown[];
      paths: Record<string, Record<string, Op>>;
      components: { securitySchemes: Record<string, unknown>; responses: Record<string, { headers?: Record<string, unknown> }>; schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
    };
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.responses.Unauthorized?.headers).toHaveProperty('WWW-Authenticate');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const open = ['/healthz', '/openapi.json'].includes(path);
        expect(op.security, `${method} ${path}`).toEqual(open ? [] : undefined);
        expect(Object.keys(op.responses).includes('401'), `${method} ${path}`).toBe(!open);
        const mayForbid = !open && !(path === '/vendor/accounts' && method === 'get');
        expect(Object.keys(op.responses).includes('403'), `${method} ${path}`).toBe(mayForbid);
      }
    }
    expect(doc.components.schemas.Account?.properties?.permissionsIgnored?.description).toMatch(/not applied.*api\.auth\.openAccounts/);
  });
});
