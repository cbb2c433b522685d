import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { oidcSchema } from '../../shared/driver-config/api.ts';
import { adminTokenAuth } from '../../test/support/api.ts';
import { createApp } from '../app.ts';
import { consoleOidcSignIn, consoleOptionsWithOidc, oidcConnectSources } from './oidc-settings.ts';

const oidc = (extra: Record<string, unknown> = {}) => v.parse(oidcSchema, { issuer: 'https://idp.example.com/realms/ops', audience: ['vendor-api'], ...extra });

describe("the console's OIDC sign-in settings", () => {
  it('offers no OIDC sign-in, and no issuer to connect to, without a client id', () => {
    expect(consoleOidcSignIn(undefined)).toBeUndefined();
    expect(consoleOidcSignIn(oidc())).toBeUndefined();
    expect(oidcConnectSources(oidc())).toEqual([]);
  });

  it('names the issuer, the public client, its scopes with openid always in them, and the resource', () => {
    expect(consoleOidcSignIn(oidc({ clientId: 'vendor-console' }))).toEqual({ issuer: 'https://idp.example.com/realms/ops', clientId: 'vendor-console', scopes: ['openid'] });
    expect(consoleOidcSignIn(oidc({ clientId: 'c', scopes: ['profile'], resource: 'urn:vendor-agent:api' }))).toEqual({
      issuer: 'https://idp.example.com/realms/ops',
      clientId: 'c',
      scopes: ['openid', 'profile'],
      resource: 'urn:vendor-agent:api',
    });
    expect(consoleOidcSignIn(oidc({ clientId: 'c', scopes: ['profile', 'openid'] }))?.scopes).toEqual(['profile', 'openid']);
  });

  it("lets the console connect to the issuer's origin only", () => {
    expect(oidcConnectSources(oidc({ clientId: 'c' }))).toEqual(['https://idp.example.com']);
    expect(oidcConnectSources(v.parse(oidcSchema, { issuer: 'http://127.0.0.1:8443/x', audience: 'a', clientId: 'c' }))).toEqual(['http://127.0.0.1:8443']);
  });

  it('refuses a client id or scope that could not be sent as one', () => {
    expect(v.safeParse(oidcSchema, { issuer: 'https://i.example', audience: 'a', clientId: '' }).success).toBe(false);
    expect(v.safeParse(oidcSchema, { issuer: 'https://i.example', audience: 'a', scopes: ['two words'] }).success).toBe(false);
    expect(v.safeParse(oidcSchema, { issuer: 'https://i.example', audience: 'a', scopes: 'openid' }).success).toBe(false);
    for (const resource of ['vendor-api', '/relative', 'https://api.example.com/#x']) {
      expect(v.safeParse(oidcSchema, { issuer: 'https://i.example', audience: resource, resource }).success, resource).toBe(false);
    }
  });
});

describe('the console app with OIDC sign-in', () => {
  // Only the console's own paths are asked for: nothing here touches the table.
  const table = { client: null as never, tableName: 'unused' };
  const consoleApp = (o: ReturnType<typeof oidc> | undefined) => createApp({ table, auth: adminTokenAuth(), console: consoleOptionsWithOidc(o, { dir: '/nonexistent' }) });

  it('offers OIDC in /ui/settings.json and lets the pages connect to the issuer and nowhere else', async () => {
    const app = consoleApp(oidc({ clientId: 'vendor-console', audience: ['urn:vendor-agent:api'], resource: 'urn:vendor-agent:api' }));
    expect(await (await app.request('/ui/settings.json')).json()).toEqual({
      signIn: { token: true, oidc: { issuer: 'https://idp.example.com/realms/ops', clientId: 'vendor-console', scopes: ['openid'], resource: 'urn:vendor-agent:api' } },
    });
    const csp = (await app.request('/ui/')).headers.get('content-security-policy') ?? '';
    expect(csp.split('; ').find((d) => d.startsWith('connect-src'))).toBe("connect-src 'self' https://idp.example.com");
    // The API's own answers keep their policy.
    expect((await app.request('/healthz')).headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it('offers no OIDC and no other origin without a console client', async () => {
    for (const o of [undefined, oidc()]) {
      const app = consoleApp(o);
      expect(await (await app.request('/ui/settings.json')).json()).toEqual({ signIn: { token: true } });
      expect((await app.request('/ui/')).headers.get('content-security-policy')).toContain("connect-src 'self';");
    }
  });
});
