import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_OPERATION_TIMEOUT_MS, MAX_REPLICAS, MAX_REVISION } from '../../shared/operations/request.ts';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import type { Operation, Operation__Output } from '../../shared/protocol/messages.ts';
import { checkOperationMessage, refusalMessage } from './operation-check.ts';

const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;

/** `op` as the agent receives it: through the protocol's own encoder and decoder. */
function received(op: Operation): Operation__Output {
  return connect.responseDeserialize(connect.responseSerialize({ seq: 1, operation: op })).operation as Operation__Output;
}

const target = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' };
const base = { operationId: 'op-1', account: 'prod', attempt: 1, timeoutMs: 60_000 };

describe('checkOperationMessage', () => {
  it('runs an operation whose numbers are in range, 0 and each bound included', () => {
    expect(checkOperationMessage(received({ ...base, scale: { targets: [target], replicas: 3 } }))).toEqual({ verdict: 'run' });
    expect(checkOperationMessage(received({ ...base, timeoutMs: 0, scale: { targets: [target], replicas: 0 } }))).toEqual({ verdict: 'run' });
    expect(checkOperationMessage(received({ ...base, timeoutMs: MAX_OPERATION_TIMEOUT_MS, scale: { targets: [target], replicas: MAX_REPLICAS } }))).toEqual({ verdict: 'run' });
    expect(checkOperationMessage(received({ ...base, rolloutUndo: { target, toRevision: MAX_REVISION } }))).toEqual({ verdict: 'run' });
  });

  it('refuses each number out of range by its field, with invalid_input, and quotes nothing of the manifests', () => {
    const cases: [Operation, string][] = [
      [{ ...base, timeoutMs: '18446744073709551615', deploy: { manifests: ['{"kind":"Secret","data":{"k":"c2VjcmV0"}}'] } }, 'timeoutMs'],
      [{ ...base, timeoutMs: MAX_OPERATION_TIMEOUT_MS + 1, deploy: { manifests: ['{"kind":"Secret","data":{"k":"c2VjcmV0"}}'] } }, 'timeoutMs'],
      [{ ...base, scale: { targets: [target], replicas: MAX_REPLICAS + 1 } }, 'scale.replicas'],
      [{ ...base, scale: { targets: [target], replicas: 4294967295 } }, 'scale.replicas'],
      [{ ...base, rolloutUndo: { target, toRevision: '9007199254740992' } }, 'rolloutUndo.toRevision'],
    ];
    for (const [op, path] of cases) {
      const check = checkOperationMessage(received(op));
      expect(check.verdict, path).toBe('refuse');
      if (check.verdict === 'run') continue;
      expect(check.error.code).toBe('invalid_input');
      expect(check.error.issues.map((i) => i.path)).toEqual([path]);
      expect(refusalMessage(check.error)).toMatch(new RegExp(`^invalid_input: the operation is invalid: ${path.replace('.', '\\.')}: must be at most \\d+$`));
      expect(refusalMessage(check.error)).not.toContain('c2VjcmV0');
    }
  });

  it('refuses an operation with no action it knows, and drops one no result could name', () => {
    const none = checkOperationMessage(received(base));
    expect(none.verdict).toBe('refuse');
    if (none.verdict !== 'run') expect(none.error.message).toBe('the operation is invalid: action: names no action this agent knows; the operation may be newer than this agent');
    for (const [op, path] of [
      [{ ...base, attempt: 0 }, 'attempt'],
      [{ ...base, operationId: '' }, 'operationId'],
      [{ ...base, account: 'a'.repeat(257) }, 'account'],
    ] as const) {
      const check = checkOperationMessage(received({ ...op, delete: { targets: [target] } }));
      expect(check.verdict, path).toBe('drop');
      if (check.verdict !== 'run') expect(check.error.issues.map((i) => i.path)).toEqual([path]);
    }
  });

  it('whatever numbers the wire carries, runs the operation exactly when each is within its bound, else names each one out of it', () => {
    // Small values, each side of the bound, each side of 2^53 (where a 64-bit field stops being exact), anything, the top.
    const edges = (bound: bigint, max: bigint) =>
      fc.oneof(fc.bigInt(0n, 10n), fc.bigInt(bound - 2n, bound + 2n), fc.bigInt(2n ** 53n - 2n, 2n ** 53n + 2n), fc.bigInt(0n, max), fc.constant(max)).filter((n) => n <= max);
    const U64 = 2n ** 64n - 1n;
    const U32 = 2n ** 32n - 1n;
    fc.assert(
      fc.property(
        edges(BigInt(MAX_OPERATION_TIMEOUT_MS), U64),
        fc.oneof(
          edges(BigInt(MAX_REPLICAS), U32).map((n) => ({ field: 'scale.replicas', n })),
          edges(BigInt(MAX_REVISION), U64).map((n) => ({ field: 'rolloutUndo.toRevision', n })),
        ),
        (timeout, { field, n }) => {
          const op: Operation = {
            ...base,
            timeoutMs: timeout.toString(),
            ...(field === 'scale.replicas' ? { scale: { targets: [target], replicas: Number(n) } } : { rolloutUndo: { target, toRevision: n.toString() } }),
          };
          const bound = field === 'scale.replicas' ? BigInt(MAX_REPLICAS) : BigInt(MAX_REVISION);
          const out = [...(timeout > BigInt(MAX_OPERATION_TIMEOUT_MS) ? ['timeoutMs'] : []), ...(n > bound ? [field] : [])];
          const check = checkOperationMessage(received(op));
          if (out.length === 0) expect(check).toEqual({ verdict: 'run' });
          else {
            expect(check.verdict).toBe('refuse');
            if (check.verdict !== 'run') expect(check.error.issues.map((i) => i.path)).toEqual(out);
          }
        },
      ),
      { seed: 20261128, numRuns: 300 },
    );
  });
});
