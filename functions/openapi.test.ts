import { describe, expect, it } from 'vitest';
import { createApp } from './app.ts';
import { openApiDocument } from './openapi.ts';

// Route checks need no table: nothing here touches it.
const app = createApp({ table: { client: null as never, tableName: 'unused' } });

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
    expect(activation?.maxItems).toBe(500);
    expect(activation?.items?.required).toEqual(['name', 'state']);
    expect(activation?.items?.additionalProperties).toBe(false);
    expect(Object.keys(activation?.items?.properties ?? {})).toEqual(['name', 'zoneId', 'kubeconfigFile', 'kubeConfigFile', 'state']);
    expect(Object.keys(doc.components.schemas.Account?.properties ?? {})).toEqual([
      'name', 'type', 'source', 'config', 'zoneId', 'agents', 'lastAssignmentMsg', 'state',
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
});
