/**
 * A replica's held reservations on a manual clock, with a stand-in for the dispatcher's `reserve`:
 * the hold's end, the verdicts that match and those that do not, a named wake's release.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { OperationReservation, QueuedOperation } from '../../shared/operations/events.ts';
import type { OperationRecord } from '../../shared/operations/model.ts';
import { requestHash } from '../../shared/operations/hash.ts';
import { compress, operationIdOf, storedApart } from '../../shared/table/operations/operations.ts';
import type { VerifiedReserveAsk } from '../../shared/wake/reserve-ask.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { HeldReservations, RESERVATION_HOLD_MS, type ReservationOutcome } from './reservations.ts';

const request = { action: 'scale' as const, targets: [{ kind: 'Deployment', name: 'web', namespace: 'default' }], replicas: 2 };

function ask(key: string, nonce = 'ab'.repeat(16), encoded = Buffer.from(compress(request)).toString('base64')): VerifiedReserveAsk {
  return {
    operationId: operationIdOf('prod', 'oidc:alice', key),
    account: 'prod',
    at: 1_000,
    nonce,
    operation: { account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: key, requestHash: requestHash('prod', request), record: { action: 'scale', objects: 1 }, now: 1_000, request: encoded },
  };
}

function setup(holders = true, readStored?: (id: string) => Promise<OperationRecord | undefined>) {
  const clock = new ManualClock(1_000);
  const handedOut: QueuedOperation[] = [];
  const released: string[] = [];
  const outcomes: ReservationOutcome[] = [];
  const held = new HeldReservations({
    clock,
    counted: (o) => outcomes.push(o),
    ...(readStored === undefined ? {} : { readStored }),
    reserve: (id, _account, now): OperationReservation | undefined =>
      holders
        ? { dispatch: { agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: now }, handOut: (op) => handedOut.push(op), release: () => released.push(id) }
        : undefined,
  });
  return { clock, held, handedOut, released, outcomes };
}

describe('held reservations', () => {
  it('hands the reservation out on its own "stored", with the record the API stores and the request the ask carried', () => {
    const s = setup();
    const a = ask('k1');
    expect(s.held.take(a)).toEqual({ agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: 1_000 });
    s.held.verdict({ verdict: 'stored', operationId: a.operationId, askNonce: 'cd'.repeat(16), at: 1_000, nonce: 'ef'.repeat(16) });
    expect(s.handedOut).toEqual([]);
    s.held.verdict({ verdict: 'stored', operationId: a.operationId, askNonce: a.nonce, at: 1_000, nonce: 'ef'.repeat(16) });
    expect(s.handedOut).toEqual([
      {
        record: expect.objectContaining({ id: a.operationId, account: 'prod', state: 'RUNNING', attempt: 1, createdAt: 1_000, dispatchedAt: 1_000, handedTo: ['a1'], dispatch: { agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: 1_000 } }),
        request,
      },
    ]);
    // Settled: another verdict for it changes nothing.
    s.held.verdict({ verdict: 'release', operationId: a.operationId, askNonce: a.nonce, at: 1_000, nonce: '12'.repeat(16) });
    expect(s.released).toEqual([]);
    expect(s.outcomes).toEqual(['reserved', 'unknown', 'handed_out', 'unknown']);
  });

  it('frees the agent on "release", on a named wake for the id, and by itself when the hold ends', async () => {
    const s = setup();
    const [a, b, c] = [ask('k1'), ask('k2'), ask('k3')];
    for (const x of [a, b, c]) s.held.take(x);
    s.held.verdict({ verdict: 'release', operationId: a.operationId, askNonce: a.nonce, at: 1_000, nonce: 'ef'.repeat(16) });
    s.held.releaseFor(b.operationId);
    expect(s.released).toEqual([a.operationId, b.operationId]);
    await s.clock.advance(RESERVATION_HOLD_MS - 1);
    expect(s.held.size).toBe(1);
    await s.clock.advance(1);
    expect(s.released).toEqual([a.operationId, b.operationId, c.operationId]);
    expect(s.held.size).toBe(0);
    expect(s.handedOut).toEqual([]);
    expect(s.outcomes).toEqual(['reserved', 'reserved', 'reserved', 'released', 'released', 'expired']);
  });

  it('reads the operation when the hold ends without a verdict: sends it when stored with this hand-out, else frees the agent', async () => {
    const stored = new Map<string, OperationRecord>();
    const s = setup(true, async (id) => {
      if (id === 'unreadable') throw new Error('the table failed');
      return stored.get(id);
    });
    const [lost, queued, other, never] = [ask('lost'), ask('queued'), ask('other'), ask('never')];
    for (const x of [lost, queued, other, never]) s.held.take(x);
    const mine = { agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: 1_000 };
    const record = (x: VerifiedReserveAsk, over: Partial<OperationRecord>) =>
      ({ id: x.operationId, account: 'prod', submittedBy: 'oidc:alice', idempotencyKey: 'k', requestHash: 'h', createdAt: 1_000, updatedAt: 1_000, action: 'scale', objects: 1, ...over }) as OperationRecord;
    // Its "stored" was lost: the put holds this very hand-out.
    stored.set(lost.operationId, record(lost, { state: 'RUNNING', attempt: 1, dispatch: mine }));
    // Stored queued after all, and stored handed out to another session.
    stored.set(queued.operationId, record(queued, { state: 'QUEUED', attempt: 0 }));
    stored.set(other.operationId, record(other, { state: 'RUNNING', attempt: 1, dispatch: { ...mine, sessionId: 's2' } }));
    await s.clock.advance(RESERVATION_HOLD_MS);
    await vi.waitFor(() => expect(s.handedOut.length + s.released.length).toBe(4));
    expect(s.handedOut).toEqual([{ record: stored.get(lost.operationId), request }]);
    expect(s.released.sort()).toEqual([queued.operationId, other.operationId, never.operationId].sort());
    expect(s.outcomes.filter((o) => o !== 'reserved').sort()).toEqual(['expired', 'expired', 'expired', 'found_stored']);
    // A read that fails frees the agent: the pass decides, as without the read.
    const t = setup(true, async () => {
      throw new Error('the table failed');
    });
    const x = ask('unreadable');
    t.held.take(x);
    await t.clock.advance(RESERVATION_HOLD_MS);
    await vi.waitFor(() => expect(t.released).toEqual([x.operationId]));
    expect(t.handedOut).toEqual([]);
  });

  it('reserves nothing when no agent here holds the account, for an id held already, or for a request it cannot read', () => {
    expect(setup(false).held.take(ask('k1'))).toBeUndefined();
    const s = setup();
    s.held.take(ask('k1'));
    expect(s.held.take(ask('k1', 'cd'.repeat(16)))).toBeUndefined();
    expect(s.held.take(ask('k2', undefined, Buffer.from('not gzip').toString('base64')))).toBe('malformed');
    expect(s.held.size).toBe(1);
  });

  it('does not take a request larger than the API keeps inline, even one its hash names', () => {
    // Random hex packs to about half: well over the inline limit once compressed.
    const large = { action: 'scale' as const, targets: [{ kind: 'Deployment', name: randomBytes(6_000).toString('hex'), namespace: 'default' }], replicas: 2 };
    const compressed = compress(large);
    expect(storedApart(compressed)).toBe(true);
    const a = ask('k1', undefined, Buffer.from(compressed).toString('base64'));
    const s = setup();
    expect(s.held.take({ ...a, operation: { ...a.operation, requestHash: requestHash('prod', large) } })).toBe('malformed');
    expect(s.held.size).toBe(0);
  });
});
