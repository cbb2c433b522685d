import { describe, expect, it } from 'vitest';
import { ERROR_CODES, VendorError } from '../shared/errors.ts';
import { HTTP_STATUS, MAX_PROBLEM_ERRORS, RETRY_AFTER_THROTTLED_SECONDS, RETRY_AFTER_UNAVAILABLE_SECONDS, challengeFor, retryAfterSeconds, toProblem, toVendorError } from './problem.ts';

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

  it('keeps the answer small whatever the error holds: the first errors, a count of the rest, texts cut', () => {
    const issues = Array.from({ length: 250 }, (_, i) => ({ path: `[${i}].${'k'.repeat(i === 0 ? 70_000 : 1)}`, message: 'unknown field' }));
    const problem = toProblem(new VendorError('invalid_input', 'x'.repeat(1_000_000), { issues }));
    expect(problem.errors).toHaveLength(MAX_PROBLEM_ERRORS + 1);
    expect(problem.errors.at(-1)).toEqual({ path: '', message: '150 more problems not listed' });
    expect(problem.errors[0]?.path.length).toBeLessThanOrEqual(301);
    expect(problem.detail.length).toBeLessThanOrEqual(2_001);
    expect(JSON.stringify(problem).length).toBeLessThan(64 * 1024);
  });

  it('hides unexpected failures and calls a throttled table unavailable', () => {
    const internal = toVendorError(new Error('secret stack detail'));
    expect(internal.code).toBe('internal');
    expect(internal.message).not.toContain('secret');
    expect(toVendorError(Object.assign(new Error('x'), { name: 'ProvisionedThroughputExceededException' })).code).toBe('unavailable');
    expect(toVendorError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })).code).toBe('unavailable');
  });

  it('calls any 5xx answer of the table unavailable, even one whose body is not the table\'s JSON', () => {
    // What the SDK throws for a gateway's HTML error page in front of the table.
    const gatewayPage = Object.assign(new SyntaxError('Unexpected token \'<\''), { $metadata: { httpStatusCode: 502 } });
    expect(toVendorError(gatewayPage).code).toBe('unavailable');
    expect(toVendorError(Object.assign(new Error('UnknownError'), { name: 'Unknown', $fault: 'server', $metadata: { httpStatusCode: 503 } })).code).toBe('unavailable');
    // A request the table refused is a defect of ours, not an outage.
    expect(toVendorError(Object.assign(new Error('x'), { name: 'ValidationException', $fault: 'client', $metadata: { httpStatusCode: 400 } })).code).toBe('internal');
  });

  it('tells a 503 caller when to come back: soon after throttling, later after an outage', () => {
    const throttled = toVendorError(Object.assign(new Error('x'), { name: 'ThrottlingException' }));
    expect(retryAfterSeconds(throttled)).toBe(RETRY_AFTER_THROTTLED_SECONDS);
    expect(retryAfterSeconds(toVendorError(Object.assign(new Error('x'), { name: 'TimeoutError' })))).toBe(RETRY_AFTER_UNAVAILABLE_SECONDS);
    expect(retryAfterSeconds(new VendorError('unavailable', 'issuer down'))).toBe(RETRY_AFTER_UNAVAILABLE_SECONDS);
    for (const code of ERROR_CODES.filter((c) => c !== 'unavailable')) expect(retryAfterSeconds(new VendorError(code, 'x'))).toBeUndefined();
  });

  it('challenges a 401 with the bearer scheme, and nothing else', () => {
    expect(HTTP_STATUS.unauthenticated).toBe(401);
    expect(HTTP_STATUS.forbidden).toBe(403);
    expect(challengeFor('unauthenticated', false)).toBe('Bearer realm="vendor-agent"');
    expect(challengeFor('unauthenticated', true)).toBe('Bearer realm="vendor-agent", error="invalid_token"');
    for (const code of ERROR_CODES.filter((c) => c !== 'unauthenticated')) expect(challengeFor(code, true)).toBeUndefined();
  });
});
