import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { FLEET_IDENTITY, bearerTokenCheck } from './auth.ts';

function withAuth(value?: string): Metadata {
  const m = new Metadata();
  if (value !== undefined) m.set('authorization', value);
  return m;
}

describe('bearerTokenCheck', () => {
  const check = bearerTokenCheck(['old-token-0123456789', 'new-token-0123456789']);

  it('accepts each configured token as the fleet identity', () => {
    expect(check(withAuth('Bearer old-token-0123456789'))).toBe(FLEET_IDENTITY);
    expect(check(withAuth('bearer new-token-0123456789'))).toBe(FLEET_IDENTITY);
  });

  it('refuses missing, non-bearer and unknown tokens without echoing them', () => {
    expect(() => check(withAuth())).toThrow('missing bearer token');
    expect(() => check(withAuth('Basic dXNlcjpwdw=='))).toThrow('authorization is not a bearer token');
    expect(() => check(withAuth('Bearer old-token-012345678'))).toThrow(/^bearer token not accepted$/);
    expect(() => check(withAuth('Bearer old-token-0123456789x'))).toThrow(/^bearer token not accepted$/);
  });

  it('lets every call through when no tokens are configured', () => {
    expect(() => bearerTokenCheck([])(withAuth())).not.toThrow();
  });
});
