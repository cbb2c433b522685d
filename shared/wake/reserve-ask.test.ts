import { describe, expect, it } from 'vitest';
import { compress, operationIdOf } from '../table/operations/operations.ts';
import { encodeWake } from './message.ts';
import { encodeResultAsk } from './result-ask.ts';
import { signResultAnswer } from './result-answer.ts';
import { believedReservation, encodeReserveAsk, MAX_RESERVE_BODY_BYTES, signReserveAnswer, verifyReserveAsk, type ReservedOperation } from './reserve-ask.ts';

const SECRET = 'reserve-ask-secret-0123456789abcdef0123';
const OTHER = 'another-secret-0123456789abcdef0123456';
const AT = 1_700_000_000_000;
const NONCE = 'ab'.repeat(16);
const operation: ReservedOperation = {
  account: 'prod',
  submittedBy: 'oidc:alice',
  idempotencyKey: 'key-1',
  requestHash: 'c'.repeat(64),
  record: { action: 'deploy', objects: 1 },
  now: AT,
  request: Buffer.from(compress({ action: 'deploy', manifests: [] })).toString('base64'),
};
const ID = operationIdOf('prod', 'oidc:alice', 'key-1');
const idOf = (op: ReservedOperation) => operationIdOf(op.account, op.submittedBy, op.idempotencyKey);
const BODY = JSON.stringify(operation);
const DISPATCH = { agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: AT };

describe('reservation asks', () => {
  it('round-trips an ask signed with the secret, with the operation it carries', () => {
    const header = encodeReserveAsk(SECRET, ID, 'prod', AT, BODY, NONCE);
    expect(verifyReserveAsk(SECRET, header, BODY, idOf)).toEqual({ operationId: ID, account: 'prod', at: AT, nonce: NONCE, operation });
  });

  it('refuses an ask whose line or body was changed, or that another secret signed', () => {
    const header = encodeReserveAsk(SECRET, ID, 'prod', AT, BODY, NONCE);
    for (const [from, to] of [[' prod ', ' stage '], [` ${AT} `, ` ${AT + 1} `], ['abab', 'cdcd']] as const) {
      expect(verifyReserveAsk(SECRET, header.replace(from, to), BODY, idOf)).toBe('forged');
    }
    expect(verifyReserveAsk(SECRET, header, BODY.replace('key-1', 'key-2'), idOf)).toBe('forged');
    expect(verifyReserveAsk(OTHER, header, BODY, idOf)).toBe('forged');
  });

  it('takes no wake or result ask for an ask, nor a body that is not the operation the line names', () => {
    expect(verifyReserveAsk(SECRET, encodeWake(SECRET, 'operations', AT).toString('latin1'), BODY, idOf)).toBe('malformed');
    expect(verifyReserveAsk(SECRET, encodeResultAsk(SECRET, ID, 1000, AT), BODY, idOf)).toBe('malformed');
    expect(verifyReserveAsk(SECRET, undefined, BODY, idOf)).toBe('malformed');
    const other = JSON.stringify({ ...operation, idempotencyKey: 'key-2' });
    expect(verifyReserveAsk(SECRET, encodeReserveAsk(SECRET, ID, 'prod', AT, other), other, idOf)).toBe('malformed');
    const stage = JSON.stringify({ ...operation, account: 'stage' });
    expect(verifyReserveAsk(SECRET, encodeReserveAsk(SECRET, ID, 'prod', AT, stage), stage, idOf)).toBe('malformed');
    const extra = JSON.stringify({ ...operation, dispatch: DISPATCH });
    expect(verifyReserveAsk(SECRET, encodeReserveAsk(SECRET, ID, 'prod', AT, extra), extra, idOf)).toBe('malformed');
    const big = 'x'.repeat(MAX_RESERVE_BODY_BYTES + 1);
    expect(verifyReserveAsk(SECRET, encodeReserveAsk(SECRET, ID, 'prod', AT, big), big, idOf)).toBe('malformed');
  });
});

describe('reservation answers', () => {
  const ask = encodeReserveAsk(SECRET, ID, 'prod', AT, BODY, NONCE);
  const body = JSON.stringify(DISPATCH);

  it('believes a hand-out signed for the very ask it answers', () => {
    expect(believedReservation(SECRET, ask, signReserveAnswer(SECRET, ask, body), body)).toEqual(DISPATCH);
  });

  it('believes nothing unsigned, altered, signed for another ask or under another secret, a result answer, or not a hand-out', () => {
    const another = encodeReserveAsk(SECRET, ID, 'prod', AT, BODY);
    expect(believedReservation(SECRET, ask, undefined, body)).toBeUndefined();
    expect(believedReservation(SECRET, ask, signReserveAnswer(SECRET, ask, body), body.replace('s1', 's2'))).toBeUndefined();
    expect(believedReservation(SECRET, ask, signReserveAnswer(SECRET, another, body), body)).toBeUndefined();
    expect(believedReservation(SECRET, ask, signReserveAnswer(OTHER, ask, body), body)).toBeUndefined();
    expect(believedReservation(SECRET, ask, signResultAnswer(SECRET, ask, body), body)).toBeUndefined();
    const notOne = JSON.stringify({ agentId: 'a1' });
    expect(believedReservation(SECRET, ask, signReserveAnswer(SECRET, ask, notOne), notOne)).toBeUndefined();
  });
});
