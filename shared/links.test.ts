import { describe, expect, it } from 'vitest';
import { SST_LINKS, linkedField } from './links.ts';

describe('linkedField', () => {
  it('reads one field of an injected SST resource', () => {
    const env = { SST_RESOURCE_VendorOidcIssuer: JSON.stringify({ type: 'sst.sst.Secret', value: 'https://issuer.example' }) };
    expect(linkedField(env, SST_LINKS.oidcIssuer, 'value')).toBe('https://issuer.example');
  });

  it('is undefined for a resource that is not linked', () => {
    expect(linkedField({}, SST_LINKS.oidcIssuer, 'value')).toBeUndefined();
  });

  it('refuses a link that is not JSON or lacks the field, naming the variable but not its content', () => {
    expect(() => linkedField({ SST_RESOURCE_VendorOidcAudience: 's3cret-not-json' }, SST_LINKS.oidcAudience, 'value')).toThrow(/^SST_RESOURCE_VendorOidcAudience is not JSON$/);
    expect(() => linkedField({ SST_RESOURCE_VendorTable: '{"value":"x"}' }, SST_LINKS.table, 'name')).toThrow(/no string field "name"/);
  });
});

describe('linkedField from the encrypted link file of a Lambda function', () => {
  async function sealed(resources: Record<string, unknown>): Promise<{ env: NodeJS.ProcessEnv; dir: string }> {
    const { createCipheriv, randomBytes } = await import('node:crypto');
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const key = randomBytes(32);
    const cipher = createCipheriv('aes-256-gcm', key, Buffer.alloc(12, 0));
    const body = Buffer.concat([cipher.update(JSON.stringify(resources)), cipher.final(), cipher.getAuthTag()]);
    const dir = mkdtempSync(join(tmpdir(), 'links-'));
    writeFileSync(join(dir, 'resource.enc'), body);
    return { env: { SST_KEY_FILE: join(dir, 'resource.enc'), SST_KEY: key.toString('base64') }, dir };
  }

  it('reads fields of linked resources, and the environment variable wins when both are there', async () => {
    const { env } = await sealed({ VendorTable: { name: 'app-prod-VendorTable', type: 'sst.aws.Dynamo' }, VendorOidcAudience: { value: 'vendor-api', type: 'sst.sst.Secret' } });
    expect(linkedField(env, SST_LINKS.table, 'name')).toBe('app-prod-VendorTable');
    expect(linkedField(env, SST_LINKS.oidcAudience, 'value')).toBe('vendor-api');
    expect(linkedField(env, SST_LINKS.oidcIssuer, 'value')).toBeUndefined();
    expect(linkedField({ ...env, SST_RESOURCE_VendorTable: '{"name":"from-env"}' }, SST_LINKS.table, 'name')).toBe('from-env');
  });

  it('a wrong key is refused without naming the key or the contents', async () => {
    const { env } = await sealed({ VendorOidcIssuer: { value: 'https://issuer' } });
    const wrong = { ...env, SST_KEY: Buffer.alloc(32, 7).toString('base64') };
    expect(() => linkedField(wrong, SST_LINKS.oidcIssuer, 'value')).toThrow('the SST link file named by SST_KEY_FILE cannot be read or decrypted with SST_KEY');
  });
});
