import { describe, expect, it } from 'vitest';
import { certificateIdentityName } from './credentials.ts';

const cert = (subjectaltname: string | undefined, CN = 'edge') => ({ subjectaltname, subject: { CN } as never });

describe('the identity a client certificate names', () => {
  it('is its one identity URI SAN', () => {
    expect(certificateIdentityName(cert('DNS:agent.example, URI:urn:vendor-agent:identity:edge-1'), false)).toBe('edge-1');
    expect(certificateIdentityName(cert('URI:urn:other:edge'), false)).toBeUndefined();
    expect(certificateIdentityName(cert(undefined), false)).toBeUndefined();
  });

  it('refuses two identity URIs, and a name that cannot be an identity\'s', () => {
    expect(certificateIdentityName(cert('URI:urn:vendor-agent:identity:a, URI:urn:vendor-agent:identity:b'), false)).toEqual({ invalid: 'the client certificate names more than one agent identity' });
    expect(certificateIdentityName(cert('URI:urn:vendor-agent:identity:a/b'), false)).toEqual({ invalid: 'the client certificate names no valid agent identity' });
    // A name hidden in a quoted entry is read as Node unquotes it, and judged like any other.
    expect(certificateIdentityName(cert('URI:"urn:vendor-agent:identity:x, URI:urn:vendor-agent:identity:y"'), false)).toEqual({ invalid: 'the client certificate names no valid agent identity' });
  });

  it('falls back to the CN only when told to, and never over a URI', () => {
    expect(certificateIdentityName(cert(undefined, 'edge'), false)).toBeUndefined();
    expect(certificateIdentityName(cert(undefined, 'edge'), true)).toBe('edge');
    expect(certificateIdentityName(cert('URI:urn:vendor-agent:identity:core', 'edge'), true)).toBe('core');
    expect(certificateIdentityName({ subjectaltname: undefined, subject: { CN: ['a', 'b'] } as never }, true)).toBeUndefined();
  });
});
