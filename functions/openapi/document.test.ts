import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/errors.ts';
import { adminTokenAuth } from '../../test/support/api.ts';
import { createApp, OPEN_PATHS } from '../app.ts';
import { openApiDocument } from './document.ts';

// Route checks need no table: nothing here touches it.
const app = createApp({ table: { client: null as never, tableName: 'unused' }, auth: adminTokenAuth() });

type Operation = { operationId?: string; security?: unknown[]; parameters?: { name: string; in: string }[]; responses?: Record<string, unknown> };
type Document = {
  openapi: string;
  security: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, unknown>;
    responses: Record<string, { headers?: Record<string, unknown> }>;
    schemas: Record<string, Record<string, unknown>>;
  };
};

const document = (await openApiDocument(app)) as Document;

/** `GET /vendor/accounts/{accountId}` of each route the app serves, from Hono's own list. */
function servedRoutes(): string[] {
  const routes = app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:([^/]+)/g, '{$1}')}`);
  return [...new Set(routes)].sort();
}

function operations(): [string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]));
}

function refsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsOf);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => (key === '$ref' && typeof inner === 'string' ? [inner] : refsOf(inner)));
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1, served at /openapi.json without credentials, generated from the app', async () => {
    const res = await app.request('/openapi.json');
    expect(res.status).toBe(200);
    const served = (await res.json()) as Document;
    expect(served.openapi).toBe('3.1.0');
    expect(served).toEqual(document);
  });

  it('describes every route the app serves, and nothing else: a route without a description fails here', () => {
    expect(operations().map(([route]) => route).sort()).toEqual(servedRoutes());
  });

  it('gives every route its answers, its security and its path parameters', () => {
    for (const [route, op] of operations()) {
      const path = route.split(' ')[1] as string;
      const open = (OPEN_PATHS as readonly string[]).includes(path);
      expect(op.operationId, route).toMatch(/^[a-z][A-Za-z]+$/);
      expect(Object.keys(op.responses ?? {}).some((status) => /^2\d\d$/.test(status)), route).toBe(true);
      expect(op.security, route).toEqual(open ? [] : [{ bearerAuth: [] }]);
      expect(Object.keys(op.responses ?? {}).includes('401'), route).toBe(!open);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      expect((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort(), route).toEqual(templated);
    }
    expect(new Set(operations().map(([, op]) => op.operationId)).size).toBe(operations().length);
  });

  it('asks for credentials exactly where the app does', async () => {
    for (const [route, op] of operations()) {
      if (op.security?.length === 0) continue;
      const [method, path] = route.split(' ') as [string, string];
      const res = await app.request(path.replace(/\{[^}]+\}/g, 'x'), { method });
      expect(res.status, route).toBe(401);
    }
  });

  it('defines every schema and response it refers to', () => {
    const refs = new Set(refsOf(document));
    expect(refs.size).toBeGreaterThan(10);
    for (const ref of refs) {
      const [, section, name] = /^#\/components\/(schemas|responses)\/(.+)$/.exec(ref) ?? [];
      expect(section === undefined ? undefined : document.components[section as 'schemas' | 'responses'][name as string], ref).toBeDefined();
    }
  });

  it('takes request and response shapes from the valibot schemas', () => {
    type Batch = { items?: { properties?: Record<string, unknown>; required?: string[]; additionalProperties?: boolean }; maxItems?: number };
    const activation = document.components.schemas.ActivationBatch as Batch;
    expect(activation.maxItems).toBe(1000);
    expect(activation.items?.required).toEqual(['name', 'state']);
    expect(activation.items?.additionalProperties).toBe(false);
    expect(Object.keys(activation.items?.properties ?? {})).toEqual(['name', 'zoneId', 'kubeconfigFile', 'kubeConfigFile', 'state']);
    expect(Object.keys(document.components.schemas.Account?.properties ?? {})).toEqual([
      'name', 'type', 'source', 'config', 'zoneId', 'agents', 'lastAssignmentMsg', 'state', 'cluster', 'permissionsIgnored', 'permissionsIgnoredReason',
    ]);
    const cluster = (document.components.schemas.Account?.properties as Record<string, { description?: string; properties?: Record<string, unknown>; required?: string[] }> | undefined)?.cluster;
    expect(cluster?.description).toContain('`state` keeps its meaning');
    expect(Object.keys(cluster?.properties ?? {})).toEqual(['reachable', 'since', 'reason', 'error', 'lastOutage', 'reportedBy', 'reportedAt']);
    expect(cluster?.required).toEqual(['reachable', 'since', 'reportedBy', 'reportedAt']);
    expect(Object.keys(document.components.schemas.AccountPage?.properties ?? {})).toEqual(['items', 'page', 'limit', 'total']);
    const allowances = document.components.schemas.AgentIdentityAllowances as { additionalProperties?: boolean; properties?: Record<string, { maxItems?: number; description?: string }> };
    expect(allowances.additionalProperties).toBe(false);
    expect(allowances.properties?.zones).toMatchObject({ maxItems: 100, description: expect.stringMatching(/^Zones its agents may serve/) });
  });

  it('describes the resource answers from their schemas, a page referring to its named item', () => {
    type Schema = { properties?: Record<string, Schema & { description?: string; anyOf?: unknown[] }>; items?: Schema & { $ref?: string }; required?: string[]; $defs?: unknown };
    const schemas = document.components.schemas as Record<string, Schema>;
    expect(schemas.ResourcePage?.properties?.items?.items).toEqual({ $ref: '#/components/schemas/Resource' });
    expect(schemas.ResourcePage?.$defs).toBeUndefined();
    expect(schemas.ResourcePage?.required).toEqual(['items']);
    expect(schemas.Resource?.properties?.namespace?.description).toBe('Absent for cluster-scoped resources.');
    const kind = schemas.CacheHealth?.properties?.kinds?.items;
    expect(kind?.properties?.watching).toEqual({ type: 'integer', description: 'Of those, how many had a watch open at the report.' });
    expect(kind?.properties?.lastEventAgeMs?.anyOf).toEqual([{ type: 'integer' }, { type: 'null' }]);
    expect(schemas.PodMetrics?.required).toEqual(['account', 'storedAt', 'pods']);
  });

  it('describes the agent identity answers from their schemas, each allowance required in an identity served', () => {
    type Schema = { properties?: Record<string, Schema & { description?: string }>; items?: Schema & { $ref?: string }; required?: string[] };
    const schemas = document.components.schemas as Record<string, Schema>;
    const answer = (method: string, path: string, status: string) =>
      (document.paths[path]?.[method]?.responses?.[status] as { content?: { 'application/json'?: { schema?: Schema } } } | undefined)?.content?.['application/json']?.schema;
    expect(schemas.AgentIdentity?.required).toEqual(['name', 'zones', 'unzoned', 'agentIds', 'staticAccounts', 'createdAt', 'updatedAt']);
    expect(schemas.AgentIdentity?.properties?.agentIds?.description).toMatch(/^Agent ids its agents may use/);
    expect(answer('get', '/vendor/agent-identities', '200')?.properties?.items?.items).toEqual({ $ref: '#/components/schemas/AgentIdentity' });
    expect(answer('get', '/vendor/agent-identities/{name}/tokens', '200')?.properties?.items?.items).toEqual({ $ref: '#/components/schemas/AgentToken' });
    expect(schemas.AgentToken?.required).toEqual(['tokenId', 'createdAt', 'expired']);
    expect(schemas.AgentToken?.properties?.expiresAt?.description).toBe('Absent: valid until revoked.');
    expect(schemas.IssuedAgentToken?.required?.slice().sort()).toEqual(['createdAt', 'expired', 'identity', 'token', 'tokenId']);
    expect(schemas.IssuedAgentToken?.properties?.token?.description).toMatch(/Shown only here/);
    expect(answer('delete', '/vendor/agent-identities/{name}/tokens/{tokenId}', '200')?.required).toEqual(['identity', 'tokenId']);
  });

  it('describes operation requests per action and the operation served', () => {
    type Request = { oneOf?: { properties?: Record<string, { const?: string }>; required?: string[] }[] };
    const request = document.components.schemas.OperationRequest as Request;
    expect((request.oneOf ?? []).map((s) => s.properties?.action?.const)).toEqual(['deploy', 'delete', 'scale', 'patch', 'rolloutRestart', 'rolloutUndo']);
    expect(request.oneOf?.[0]?.required).toEqual(['action', 'manifests']);
    expect(Object.keys(document.components.schemas.Operation?.properties ?? {})).toEqual(expect.arrayContaining(['id', 'state', 'outcomes', 'createdAt', 'finishedAt', 'errorCode']));
    const errorCode = (document.components.schemas.Operation as { properties?: Record<string, { enum?: unknown[] }> }).properties?.errorCode;
    expect(errorCode?.enum).toEqual([...ERROR_CODES]);
  });

  it('says how callers authenticate and what each refusal looks like', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.components.responses.Unauthorized?.headers).toHaveProperty('WWW-Authenticate');
    for (const [route, op] of operations()) {
      const open = op.security?.length === 0;
      // Lists and summaries serve what the caller may read; an agent the caller may not see is not found;
      // the caller route answers what the caller may do.
      const mayForbid = !open && !['GET /vendor/accounts', 'GET /vendor/agents', 'GET /vendor/agents/{agentId}', 'GET /vendor/account-summary', 'GET /vendor/caller'].includes(route);
      expect(Object.keys(op.responses ?? {}).includes('403'), route).toBe(mayForbid);
    }
    const account = document.components.schemas.Account as { properties?: Record<string, { description?: string }> };
    expect(account.properties?.permissionsIgnored?.description).toMatch(/not applied.*api\.auth\.openAccounts/);
  });

  it('answers with problem details wherever a route refuses', () => {
    for (const [route, op] of operations()) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (!/^[45]\d\d$/.test(status) || status === '401') continue;
        expect(response, `${route} ${status}`).toMatchObject({ content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
      }
    }
  });
});
