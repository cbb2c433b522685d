import { describe, expect, it } from 'vitest';
import { SST_LINKS, linkedField } from './links.ts';

describe('linkedField', () => {
  it('reads one field of an injected SST resource', () => {
    const env = { SST_RESOURCE_VendorOidcIssuer: JSON.stringify({ type: 'sst.sst.Secret', value: 'https://issuer.example' }) };
    expect(linkedField(env, SST_LINKS.oidcIssuer, 'value')).toBe('https://issuer.example');
  });

  it('is undefined for a resource that is not linked', () => {
    expect(linkedField({}, SST_LINKS.agentTokens, 'value')).toBeUndefined();
  });

  it('refuses a link that is not JSON or lacks the field, naming the variable but not its content', () => {
    expect(() => linkedField({ SST_RESOURCE_VendorAgentTokens: 'tok3n-not-json' }, SST_LINKS.agentTokens, 'value')).toThrow(/^SST_RESOURCE_VendorAgentTokens is not JSON$/);
    expect(() => linkedField({ SST_RESOURCE_VendorTable: '{"value":"x"}' }, SST_LINKS.table, 'name')).toThrow(/no string field "name"/);
  });
});
