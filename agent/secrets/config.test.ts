import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE, SecretsConfigSchema, VaultConfigSchema } from './config.ts';

function problems(input: unknown): string[] {
  const result = v.safeParse(VaultConfigSchema, input);
  return result.success ? [] : result.issues.map((i) => `${v.getDotPath(i) ?? ''}: ${i.message}`);
}

describe('secrets.vault schema', () => {
  it('defaults to a disabled vault with token auth', () => {
    expect(v.parse(SecretsConfigSchema, {})).toEqual({
      vault: { enabled: false, authMethod: 'TOKEN', serviceAccountTokenFile: DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE, timeoutMs: 10_000, tls: { insecureSkipVerify: false } },
    });
  });

  it('accepts the auth method in any case and keeps it upper case', () => {
    expect(v.parse(VaultConfigSchema, { authMethod: 'approle' }).authMethod).toBe('APPROLE');
    expect(problems({ authMethod: 'LDAP' })).toEqual(['authMethod: must be one of TOKEN, KUBERNETES, APPROLE, USERPASS (any case)']);
  });

  it('requires a URL and the credentials of the chosen method only when enabled', () => {
    expect(problems({ authMethod: 'KUBERNETES' })).toEqual([]);
    expect(problems({ enabled: true, authMethod: 'KUBERNETES' })).toEqual([
      'url: is required when secrets.vault.enabled is true',
      'role: is required when authMethod is KUBERNETES',
    ]);
    expect(problems({ enabled: true, url: 'https://vault:8200', authMethod: 'APPROLE' })).toEqual([
      'roleId: is required when authMethod is APPROLE',
      'secretId: is required when authMethod is APPROLE',
    ]);
    expect(problems({ enabled: true, url: 'https://vault:8200', authMethod: 'USERPASS', username: 'u' })).toEqual([
      'password: is required when authMethod is USERPASS',
    ]);
    expect(problems({ enabled: true, url: 'https://vault:8200' })).toEqual([]);
  });

  it('checks the URL, the timeout and the TLS options', () => {
    for (const url of ['vault:8200', 'ftp://vault', 'not a url']) {
      expect(problems({ url })).toEqual(['url: must be an http or https URL such as https://vault.example:8200']);
    }
    expect(problems({ timeoutMs: 0 })).toHaveLength(1);
    expect(problems({ tls: { insecureSkipVerify: 'yes' } })[0]).toMatch(/^tls\.insecureSkipVerify: /);
    expect(v.parse(VaultConfigSchema, { tls: { caCertFile: '/etc/ca.pem', serverName: 'vault' } }).tls).toEqual({
      caCertFile: '/etc/ca.pem',
      serverName: 'vault',
      insecureSkipVerify: false,
    });
  });

  it('converts to a JSON Schema with a description and default for every key', () => {
    const schema = toJsonSchema(SecretsConfigSchema, { errorMode: 'ignore' }) as {
      properties: { vault: { properties: Record<string, { description?: string; default?: unknown; properties?: Record<string, { description?: string }> }> } };
    };
    const keys = schema.properties.vault.properties;
    expect(Object.keys(keys)).toEqual(Object.keys(VaultConfigSchema.pipe[0].entries));
    for (const [key, property] of Object.entries(keys)) {
      if (key === 'tls') expect(Object.values(property.properties ?? {}).every((p) => p.description !== undefined)).toBe(true);
      else expect(property.description, key).toBeDefined();
    }
    expect(keys.authMethod?.default).toBe('TOKEN');
    expect(keys.timeoutMs?.default).toBe(10_000);
  });
});
