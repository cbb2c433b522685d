import { describe, expect, it } from 'vitest';
import { issuesOf } from '../../test/support/issues.ts';
import { parseDriverConfig } from './load.ts';


const yaml = (...lines: string[]) => `${lines.join('\n')}\n`;
const TOKEN = 'local-admin-token-0123456789abcdef';

describe('api.auth in vendor-driver.yml', () => {
  it('reads the OIDC settings with their defaults', () => {
    const config = parseDriverConfig(yaml('api:', '  auth:', '    oidc:', '      issuer: https://idp.example.com/realms/ops', '      audience: vendor-api', '    accountManagerRoles: [vendor-admins]'), 'f.yml');
    expect(config.api.auth).toEqual({
      oidc: {
        issuer: 'https://idp.example.com/realms/ops',
        audience: ['vendor-api'],
        rolesClaim: 'groups',
        clockSkewSeconds: 60,
        jwksMaxAgeSeconds: 600,
        jwksCooldownSeconds: 30,
        maxTokenLifetimeSeconds: 86_400,
      },
      accountManagerRoles: ['vendor-admins'],
    });
  });

  it('takes every key, a list of audiences and a dot path for the roles', () => {
    const config = parseDriverConfig(
      yaml(
        'api:',
        '  auth:',
        `    adminToken: ${TOKEN}`,
        '    oidc:',
        '      issuer: http://127.0.0.1:8443',
        '      audience: [a, b]',
        '      rolesClaim: realm_access.roles',
        '      clockSkewSeconds: 0',
        '      jwksMaxAgeSeconds: 60',
        '      jwksCooldownSeconds: 0',
      ),
      'f.yml',
    );
    expect(config.api.auth).toMatchObject({ adminToken: TOKEN, oidc: { audience: ['a', 'b'], rolesClaim: 'realm_access.roles', clockSkewSeconds: 0 } });
  });

  it('reads openAccounts, leaving it out when not set (the mode then decides), and refuses other values', () => {
    expect(parseDriverConfig(yaml('api:', '  auth:', `    adminToken: ${TOKEN}`, '    openAccounts: readOnly'), 'f.yml').api.auth.openAccounts).toBe('readOnly');
    expect(parseDriverConfig(yaml('api:', '  auth:', `    adminToken: ${TOKEN}`), 'f.yml').api.auth.openAccounts).toBeUndefined();
    expect(issuesOf(() => parseDriverConfig(yaml('api:', '  auth:', `    adminToken: ${TOKEN}`, '    openAccounts: read-only'), 'f.yml'))).toEqual([
      { path: 'api.auth.openAccounts', message: 'must be readWrite or readOnly' },
    ]);
  });

  it('refuses bad values and unknown keys, naming each key path and never the token', () => {
    const secret = 'short-SECRET';
    const issues = issuesOf(() =>
      parseDriverConfig(
        yaml(
          'api:',
          '  auth:',
          `    adminToken: ${secret}`,
          '    oidc:',
          '      issuer: http://idp.example.com',
          '      audience: []',
          '      rolesClaim: "realm access..roles"',
          '      clockSkewSeconds: 301',
          '      jwksCooldownSeconds: -1',
          '      surprise: 1',
          '    accountManagerRoles: ["vendor admins"]',
          '    adminTokens: []',
          '  other: 1',
        ),
        'f.yml',
      ),
    );
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'api.auth.adminToken',
        'api.auth.oidc.issuer',
        'api.auth.oidc.audience',
        'api.auth.oidc.rolesClaim',
        'api.auth.oidc.clockSkewSeconds',
        'api.auth.oidc.jwksCooldownSeconds',
        'api.auth.oidc.surprise',
        'api.auth.accountManagerRoles[0]',
        'api.auth.adminTokens',
        'api.other',
      ].sort(),
    );
    expect(JSON.stringify(issues)).not.toContain('SECRET');
    expect(issues.find((i) => i.path === 'api.auth.oidc.issuer')?.message).toMatch(/https/);
  });

  it('refuses an issuer with a query or fragment, and an admin token with white space', () => {
    for (const issuer of ['https://idp.example.com/?a=1', 'https://idp.example.com/#x', 'not a url', 'ftp://idp.example.com']) {
      expect(issuesOf(() => parseDriverConfig(yaml('api:', '  auth:', '    oidc:', `      issuer: "${issuer}"`, '      audience: x'), 'f.yml')).map((i) => i.path)).toEqual(['api.auth.oidc.issuer']);
    }
    const spaced = `${TOKEN} ${TOKEN}`;
    const issues = issuesOf(() => parseDriverConfig(yaml('api:', '  auth:', `    adminToken: "${spaced}"`), 'f.yml'));
    expect(issues).toEqual([{ path: 'api.auth.adminToken', message: 'must be letters, digits and . _ ~ + / = - only' }]);
  });
});

describe('api.cors in vendor-driver.yml', () => {
  it('is absent (CORS off) unless given, and takes exact origins', () => {
    expect(parseDriverConfig(yaml('api:', '  auth:', `    adminToken: ${TOKEN}`), 'f.yml').api.cors).toBeUndefined();
    const config = parseDriverConfig(yaml('api:', '  cors:', '    allowOrigins: [https://console.example.com, "http://localhost:3000"]'), 'f.yml');
    expect(config.api.cors).toEqual({ allowOrigins: ['https://console.example.com', 'http://localhost:3000'] });
  });

  it('refuses anything but an origin, naming the key', () => {
    for (const bad of ['https://console.example.com/', 'https://console.example.com/app', '*', 'console.example.com', 'ftp://x.example.com']) {
      expect(() => parseDriverConfig(yaml('api:', '  cors:', `    allowOrigins: ["${bad}"]`), 'f.yml'), bad).toThrow(/api\.cors\.allowOrigins\[0\]/);
    }
  });
});
