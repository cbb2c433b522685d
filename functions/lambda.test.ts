import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedTable, type EmbeddedTable } from '../shared/table/core/embedded.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { TestIssuer } from '../test/support/oidc.ts';
import { tableProcessEnv } from '../test/support/table-env.ts';

let table: EmbeddedTable;
let issuer: TestIssuer;
beforeAll(async () => {
  table = await startEmbeddedTable({ tcp: true });
  issuer = await TestIssuer.start();
  await issuer.addKey('ES256');
  await syncSource(
    table,
    { id: 'driver-config', kind: 'driver-config' },
    [{ name: 'prod' }, { name: 'restricted', permissions: [{ READ: ['ops'] }] }],
    Date.now(),
  );
});
afterAll(async () => {
  await issuer.close();
  await table.close();
});

const link = (value: string) => JSON.stringify({ type: 'sst.sst.Secret', value });

function event(method: string, path: string, query = '', headers: Record<string, string> = {}) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers: { host: 'api.example.test', ...headers },
    requestContext: {
      accountId: '1',
      apiId: 'api',
      domainName: 'api.example.test',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    isBase64Encoded: false,
  };
}

type Invoke = (e: unknown, ctx: unknown) => Promise<{ statusCode: number; body: string; headers: Record<string, string> }>;

describe('Lambda handler', () => {
  it('serves the same app from the table named in the environment, to callers of the linked OIDC issuer', async () => {
    Object.assign(process.env, {
      ...tableProcessEnv(table),
      SST_RESOURCE_VendorOidcIssuer: link(issuer.url),
      SST_RESOURCE_VendorOidcAudience: link('vendor-api'),
      SST_RESOURCE_VendorOidcRolesClaim: link('realm_access.roles'),
      SST_RESOURCE_VendorAccountManagerRoles: link('vendor-admins, platform'),
    });
    vi.resetModules();
    const { handler } = await import('./lambda.ts');
    const invoke = handler as unknown as Invoke;
    const dev = `Bearer ${await issuer.token({ sub: 'dev-1', realm_access: { roles: ['dev'] } })}`;
    const list = await invoke(event('GET', '/vendor/accounts', 'limit=5', { authorization: dev }), {});
    expect(list.statusCode).toBe(200);
    expect(JSON.parse(list.body)).toMatchObject({ page: 1, limit: 5, total: 1, items: [{ name: 'prod' }] });
    const manager = `Bearer ${await issuer.token({ sub: 'admin-1', realm_access: { roles: ['platform'] } })}`;
    expect(JSON.parse((await invoke(event('GET', '/vendor/accounts', '', { authorization: manager }), {})).body)).toMatchObject({ total: 2 });
    const missing = await invoke(event('GET', '/vendor/accounts/nope', '', { authorization: dev }), {});
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
    const anonymous = await invoke(event('GET', '/vendor/accounts'), {});
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer realm="vendor-agent"');
    const health = await invoke(event('GET', '/healthz'), {});
    expect(health.statusCode).toBe(200);
    // Behind API Gateway every request came over TLS: HSTS and the other security headers are sent.
    expect(health.headers).toMatchObject({ 'strict-transport-security': 'max-age=31536000; includeSubDomains', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
  });

  it("offers the console's OIDC sign-in at the linked issuer when a console client is linked", async () => {
    Object.assign(process.env, {
      ...tableProcessEnv(table),
      SST_RESOURCE_VendorOidcIssuer: link(issuer.url),
      SST_RESOURCE_VendorOidcAudience: link('urn:vendor-agent:api'),
      SST_RESOURCE_VendorOidcClientId: link('vendor-console'),
      SST_RESOURCE_VendorOidcResource: link('urn:vendor-agent:api'),
    });
    vi.resetModules();
    const invoke = (await import('./lambda.ts')).handler as unknown as Invoke;
    const settings = await invoke(event('GET', '/ui/settings.json'), {});
    expect(JSON.parse(settings.body)).toEqual({ signIn: { token: true, oidc: { issuer: issuer.url, clientId: 'vendor-console', scopes: ['openid'], resource: 'urn:vendor-agent:api' } } });
    expect(settings.headers['content-security-policy']).toContain(`connect-src 'self' ${issuer.url};`);
    delete process.env.SST_RESOURCE_VendorOidcClientId;
    delete process.env.SST_RESOURCE_VendorOidcResource;
  });

  it('is production mode: refuses to load without an OIDC issuer, whatever else is set', async () => {
    delete process.env.SST_RESOURCE_VendorOidcIssuer;
    delete process.env.SST_RESOURCE_VendorOidcAudience;
    vi.resetModules();
    await expect(import('./lambda.ts')).rejects.toThrow(/production mode needs an OIDC issuer/);
  });
});
