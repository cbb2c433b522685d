import { Metadata, type ServerDuplexStream } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../test/support/manual-clock.ts';
import { useTestTables } from '../test/support/table.ts';
import { authenticated, FLEET_IDENTITY } from './auth.ts';
import { parseDriverGrpcConfig } from './config.ts';
import { certificateIdentityName, createAgentAuthenticator } from './credentials.ts';

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

describe('the fleet tokens of auth.tokens', () => {
  const tables = useTestTables();
  const call = (authorization?: string) => {
    const metadata = new Metadata();
    if (authorization !== undefined) metadata.set('authorization', authorization);
    return { metadata, getAuthContext: () => ({}) } as unknown as ServerDuplexStream<unknown, unknown>;
  };
  const authenticator = async () =>
    createAgentAuthenticator({
      table: await tables.fresh(),
      clock: new ManualClock(0),
      config: parseDriverGrpcConfig({ auth: { tokens: ['old-token-0123456789', 'new-token-0123456789'] } }),
    });

  it('accepts each configured token as the fleet identity', async () => {
    const authenticate = await authenticator();
    expect(authenticated(await authenticate(call('Bearer old-token-0123456789'))).identity).toBe(FLEET_IDENTITY);
    expect(authenticated(await authenticate(call('bearer new-token-0123456789'))).identity).toBe(FLEET_IDENTITY);
  });

  it('refuses missing, non-bearer and unknown tokens without echoing them', async () => {
    const authenticate = await authenticator();
    await expect(authenticate(call())).rejects.toThrow('missing bearer token');
    await expect(authenticate(call('Basic dXNlcjpwdw=='))).rejects.toThrow('authorization is not a bearer token');
    await expect(authenticate(call('Bearer old-token-012345678'))).rejects.toThrow(/^bearer token not accepted$/);
    await expect(authenticate(call('Bearer old-token-0123456789x'))).rejects.toThrow(/^bearer token not accepted$/);
  });
});
