import { describe, expect, it } from 'vitest';
import { ERROR_CODES, VendorError } from '../shared/errors.ts';
import { HTTP_STATUS, challengeFor, toProblem, toVendorError } from './problem.ts';

describe('problem mapping', () => {
  it('gives every error code a status, client errors 4xx', () => {
    for (const code of ERROR_CODES) expect(HTTP_STATUS[code]).toBeGreaterThanOrEqual(400);
    expect(HTTP_STATUS.unknown_account).toBe(400);
    expect(HTTP_STATUS.invalid_input).toBe(400);
    expect(HTTP_STATUS.payload_too_large).toBe(413);
    expect(HTTP_STATUS.not_found).toBe(404);
    expect(HTTP_STATUS.conflict).toBe(409);
  });

  it('builds RFC 9457 bodies with the code, every issue and the details', () => {
    const err = new VendorError('unknown_account', 'not driver-defined: x', {
      issues: [{ path: '[0].name', message: 'not a driver-defined account' }],
      details: { names: ['x'] },
    });
    expect(toProblem(err, '/vendor/accounts')).toEqual({
      type: 'urn:vendor-agent:problem:unknown_account',
      title: 'Not a driver-defined account',
      status: 400,
      detail: 'not driver-defined: x',
      code: 'unknown_account',
      errors: [{ path: '[0].name', message: 'not a driver-defined account' }],
      names: ['x'],
      instance: '/vendor/accounts',
    });
  });

  it('hides unexpected failures and calls a throttled table unavailable', () => {
    const internal = toVendorError(new Error('secret stack detail'));
    expect(internal.code).toBe('internal');
    expect(internal.message).not.toContain('secret');
    expect(toVendorError(Object.assign(new Error('x'), { name: 'ProvisionedThroughputExceededException' })).code).toBe('unavailable');
    expect(toVendorError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).code).toBe('unavailable');
  });

  it('challenges a 401 with the bearer scheme, and nothing else', () => {
    expect(HTTP_STATUS.unauthenticated).toBe(401);
    expect(HTTP_STATUS.forbidden).toBe(403);
    expect(challengeFor('unauthenticated', false)).toBe('Bearer realm="vendor-agent"');
    expect(challengeFor('unauthenticated', true)).toBe('Bearer realm="vendor-agent", error="invalid_token"');
    for (const code of ERROR_CODES.filter((c) => c !== 'unauthenticated')) expect(challengeFor(code, true)).toBeUndefined();
  });
});
