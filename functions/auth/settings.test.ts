import { describe, expect, it } from 'vitest';
import { rolesFromClaim } from './roles.ts';
import { apiAuthFromLinks, authConfigIssues, isProductionMode, openAccountMode } from './settings.ts';

const link = (value: string) => JSON.stringify({ type: 'sst.sst.Secret', value });

describe('roles from the configured claim', () => {
  it('reads a claim by name or dot path, as a list or a space-separated string', () => {
    const payload = { groups: ['dev', 'ops', 3, null], realm_access: { roles: ['admin'] }, scope: 'read  write', role: 'solo', nested: { list: 'x' } };
    expect([...rolesFromClaim(payload, 'groups')]).toEqual(['dev', 'ops']);
    expect([...rolesFromClaim(payload, 'realm_access.roles')]).toEqual(['admin']);
    expect([...rolesFromClaim(payload, 'scope')]).toEqual(['read', 'write']);
    expect([...rolesFromClaim(payload, 'role')]).toEqual(['solo']);
    for (const path of ['missing', 'groups.0', 'realm_access', 'realm_access.roles.x', 'nested.list.more', 'toString', '__proto__']) {
      expect([...rolesFromClaim(payload, path)], path).toEqual([]);
    }
  });
});

describe('production mode and the deployed settings', () => {
  it('is production as the Lambda handler or with VENDOR_ENV=production', () => {
    expect(isProductionMode({}, { lambda: true })).toBe(true);
    expect(isProductionMode({ VENDOR_ENV: 'production' }, { lambda: false })).toBe(true);
    expect(isProductionMode({ VENDOR_ENV: 'staging' }, { lambda: false })).toBe(false);
    expect(isProductionMode({}, { lambda: false })).toBe(false);
  });

  it('reads the SST links', () => {
    expect(
      apiAuthFromLinks({
        SST_RESOURCE_VendorOidcIssuer: link('https://idp.example.com/realms/ops'),
        SST_RESOURCE_VendorOidcAudience: link('vendor-api, ci'),
        SST_RESOURCE_VendorOidcRolesClaim: link('realm_access.roles'),
        SST_RESOURCE_VendorAccountManagerRoles: link('vendor-admins platform'),
      }),
    ).toEqual({
      oidc: { issuer: 'https://idp.example.com/realms/ops', audience: ['vendor-api', 'ci'], rolesClaim: 'realm_access.roles', clockSkewSeconds: 60, jwksMaxAgeSeconds: 600, jwksCooldownSeconds: 30, maxTokenLifetimeSeconds: 86_400 },
      accountManagerRoles: ['vendor-admins', 'platform'],
    });
    expect(apiAuthFromLinks({})).toEqual({ accountManagerRoles: [] });
    expect(apiAuthFromLinks({ SST_RESOURCE_VendorOpenAccounts: link('readWrite') })).toEqual({ accountManagerRoles: [], openAccounts: 'readWrite' });
    expect(apiAuthFromLinks({ SST_RESOURCE_VendorOpenAccounts: link(' readOnly\n') })).toEqual({ accountManagerRoles: [], openAccounts: 'readOnly' });
  });

  it("reads the console's OIDC client from its links, an empty link (the deployment's placeholder) being none", () => {
    const base = { SST_RESOURCE_VendorOidcIssuer: link('https://idp.example.com'), SST_RESOURCE_VendorOidcAudience: link('https://api.example.com') };
    expect(
      apiAuthFromLinks({ ...base, SST_RESOURCE_VendorOidcClientId: link('vendor-console'), SST_RESOURCE_VendorOidcScopes: link('openid profile'), SST_RESOURCE_VendorOidcResource: link('https://api.example.com') }).oidc,
    ).toMatchObject({ clientId: 'vendor-console', scopes: ['openid', 'profile'], resource: 'https://api.example.com' });
    const empty = apiAuthFromLinks({ ...base, SST_RESOURCE_VendorOidcClientId: link(''), SST_RESOURCE_VendorOidcScopes: link(' '), SST_RESOURCE_VendorOidcResource: link('') }).oidc;
    expect(empty).not.toHaveProperty('clientId');
    expect(empty).not.toHaveProperty('scopes');
    expect(empty).not.toHaveProperty('resource');
    expect(() => apiAuthFromLinks({ ...base, SST_RESOURCE_VendorOidcClientId: link('has space') })).toThrow(/SST link VendorOidcClientId: must be printable ASCII/);
  });

  it("refuses a console resource that is not one of the API's audiences", () => {
    const oidc = { issuer: 'https://idp.example.com', audience: ['vendor-api'], rolesClaim: 'groups', clockSkewSeconds: 60, jwksMaxAgeSeconds: 600, jwksCooldownSeconds: 30, maxTokenLifetimeSeconds: 86_400 };
    expect(authConfigIssues({ oidc: { ...oidc, resource: 'vendor-api' }, accountManagerRoles: [] }, true)).toEqual([]);
    expect(authConfigIssues({ oidc: { ...oidc, resource: 'other-api' }, accountManagerRoles: [] }, true)).toEqual([
      { path: 'api.auth.oidc.resource', message: expect.stringMatching(/must be one of the audiences/) },
    ]);
  });

  it('keeps open accounts read-only in production mode unless set otherwise', () => {
    expect(openAccountMode({}, true)).toBe('readOnly');
    expect(openAccountMode({}, false)).toBe('readWrite');
    expect(openAccountMode({ openAccounts: 'readWrite' }, true)).toBe('readWrite');
    expect(openAccountMode({ openAccounts: 'readOnly' }, false)).toBe('readOnly');
  });

  it('names the link of a bad or missing value', () => {
    expect(() => apiAuthFromLinks({ SST_RESOURCE_VendorOidcIssuer: link('http://idp.example.com') })).toThrow(
      /SST link VendorOidcIssuer: must be an https URL.*SST link VendorOidcAudience: must be a string or a list of strings/,
    );
    expect(() => apiAuthFromLinks({ SST_RESOURCE_VendorOidcAudience: link('a') })).toThrow(/SST link VendorOidcIssuer/);
    expect(() => apiAuthFromLinks({ SST_RESOURCE_VendorOpenAccounts: link('yes') })).toThrow(/SST link VendorOpenAccounts: must be readWrite or readOnly/);
  });
});
