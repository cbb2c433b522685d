/**
 * The operation as it goes on the wire: every number the encoder would change (a `uint32` takes 1e300
 * as 0, -1 as 2^32 - 1, 1.5 as 1) is refused by name rather than sent; and the error code a result
 * comes back with is kept only when it is one of the project's codes.
 */
import { describe, expect, it } from 'vitest';
import { refusal } from '../../test/refusal.ts';
import { ERROR_CODES } from '../errors.ts';
import { operationMessage, resultErrorCode } from './message.ts';
import type { OperationRequest } from './request.ts';

const web = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' };
const scale = (replicas: number): OperationRequest => ({ action: 'scale', targets: [web], replicas });
const undo = (toRevision: number): OperationRequest => ({ action: 'rolloutUndo', target: web, toRevision });

describe('an operation on the wire', () => {
  it('carries every number that the wire holds as it is', () => {
    expect(operationMessage('op', 'prod', 1, 60_000, scale(0))).toMatchObject({ attempt: 1, timeoutMs: 60_000, scale: { replicas: 0 } });
    expect(operationMessage('op', 'prod', 2 ** 32 - 1, Number.MAX_SAFE_INTEGER, scale(2 ** 32 - 1))).toMatchObject({ attempt: 2 ** 32 - 1, timeoutMs: Number.MAX_SAFE_INTEGER, scale: { replicas: 2 ** 32 - 1 } });
    expect(operationMessage('op', 'prod', 1, 1, undo(Number.MAX_SAFE_INTEGER))).toMatchObject({ rolloutUndo: { toRevision: Number.MAX_SAFE_INTEGER } });
  });

  it('refuses by name a number the encoder would change', () => {
    for (const replicas of [1e300, -1, 1.5, 2 ** 32, Number.NaN, null as unknown as number]) {
      const err = refusal(() => operationMessage('op', 'prod', 1, 60_000, scale(replicas)));
      expect(err.code, String(replicas)).toBe('invalid_input');
      expect(err.message).toMatch(/^the stored request cannot be sent: scale\.replicas is .+, not a whole number from 0 to 4294967295$/);
      expect(err.issues).toEqual([{ path: 'scale.replicas', message: 'must be a whole number from 0 to 4294967295' }]);
    }
    for (const toRevision of [1e300, 2 ** 53, -1]) expect(refusal(() => operationMessage('op', 'prod', 1, 60_000, undo(toRevision))).issues?.[0]?.path).toBe('rolloutUndo.toRevision');
    expect(refusal(() => operationMessage('op', 'prod', 1, Number.NaN, scale(1))).issues?.[0]?.path).toBe('timeoutMs');
    expect(refusal(() => operationMessage('op', 'prod', 2 ** 32, 60_000, scale(1))).issues?.[0]?.path).toBe('attempt');
  });
});

describe("a result's error code", () => {
  it('is kept on a failed result when it is one of the codes, spelled exactly', () => {
    for (const code of ERROR_CODES) expect(resultErrorCode({ ok: false, errorCode: code })).toBe(code);
  });

  it('is left out on a success, when empty, and for anything else a peer may send', () => {
    expect(resultErrorCode({ ok: true, errorCode: 'internal' })).toBeUndefined();
    for (const sent of ['', 'not_a_code', 'INVALID_INPUT', ' invalid_input', 'invalid_input\n', 'x'.repeat(100_000), 'constructor', 'toString']) {
      expect(resultErrorCode({ ok: false, errorCode: sent }), sent.slice(0, 20)).toBeUndefined();
    }
  });
});
