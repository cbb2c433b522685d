import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, VendorError } from '../shared/errors.ts';
import { protocolError } from '../shared/protocol/problems.ts';
import { MAX_STATUS_DETAILS, grpcStatusOf, statusOfError } from './grpc-status.ts';

describe('grpc status mapping', () => {
  it('gives every error code a status other than OK and UNKNOWN', () => {
    for (const code of ERROR_CODES) expect([status.OK, status.UNKNOWN]).not.toContain(grpcStatusOf(code));
    expect(grpcStatusOf('unauthenticated')).toBe(status.UNAUTHENTICATED);
    expect(grpcStatusOf('protocol_error')).toBe(status.INVALID_ARGUMENT);
    expect(grpcStatusOf('payload_too_large')).toBe(status.RESOURCE_EXHAUSTED);
    expect(grpcStatusOf('limit_exceeded')).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('carries the code, the protocol problem and the offending sequence number in trailers', () => {
    const s = statusOfError(protocolError('out_of_order', 'expected 2, got 5', { details: { seq: 5 } }));
    expect(s.code).toBe(status.INVALID_ARGUMENT);
    expect(s.details).toBe('expected 2, got 5');
    expect(s.metadata.get('vendor-error-code')).toEqual(['protocol_error']);
    expect(s.metadata.get('vendor-protocol-problem')).toEqual(['out_of_order']);
    expect(s.metadata.get('vendor-protocol-seq')).toEqual(['5']);
  });

  it('hides the text of errors that are not VendorErrors', () => {
    const s = statusOfError(new Error('connection string postgres://user:pw@host'));
    expect(s).toMatchObject({ code: status.INTERNAL, details: 'internal error' });
    expect(statusOfError(new VendorError('timeout', 'lease expired')).code).toBe(status.DEADLINE_EXCEEDED);
  });

  it(`keeps a status message to ${MAX_STATUS_DETAILS} characters, which a peer's trailers take`, () => {
    const s = statusOfError(protocolError('malformed', `malformed hello: ${'y'.repeat(50_000)}`));
    expect(s.details).toHaveLength(MAX_STATUS_DETAILS);
    expect(s.details.startsWith('malformed hello: yyy')).toBe(true);
    expect(s.details.endsWith('…')).toBe(true);
    expect(statusOfError(protocolError('malformed', 'short')).details).toBe('short');
  });
});
