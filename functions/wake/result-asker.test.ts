/**
 * The API's result asker against a replica of the test's own making, over real HTTP: what a
 * "finished" answer may carry, and which answers are believed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import type { OperationRecord } from '../../shared/operations/model.ts';
import { RESULT_ASK_HEADER } from '../../shared/wake/result-ask.ts';
import { MAX_RESULT_ANSWER_BYTES, RESULT_ANSWER_HEADER, resultAnswerBody, signResultAnswer } from '../../shared/wake/result-answer.ts';
import { ResultAsker } from './result-asker.ts';

const SECRET = 'result-asker-secret-0123456789abcdef0123';
const ID = 'a1'.repeat(16);

const finished = (over: Partial<OperationRecord> = {}): OperationRecord => ({
  id: ID,
  account: 'prod',
  action: 'deploy',
  state: 'SUCCEEDED',
  attempt: 1,
  objects: 1,
  idempotencyKey: 'k1',
  requestHash: 'h'.repeat(64),
  submittedBy: 'admin:root',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_020,
  dispatchedAt: 1_700_000_000_005,
  finishedAt: 1_700_000_000_020,
  dispatch: { agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: 1_700_000_000_005 },
  message: 'applied',
  report: { agentId: 'a1', attempt: 1, startedAt: 1_700_000_000_006, finishedAt: 1_700_000_000_015, budgetWaitMs: 0 },
  outcomes: [{ index: 0, apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'c', result: 'created' }],
  ...over,
});

type Answer = (ask: string) => { body: string; signature?: string };

const servers: Server[] = [];
const askers: ResultAsker[] = [];
afterEach(async () => {
  for (const a of askers.splice(0)) a.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A replica that answers every ask "finished" with what `answer` makes of the ask's header. */
async function replica(answer: Answer): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const { body, signature } = answer(String(req.headers[RESULT_ASK_HEADER]));
    res.writeHead(200, { 'content-type': 'application/json', ...(signature === undefined ? {} : { [RESULT_ANSWER_HEADER]: signature }) }).end(body);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function listen(answer: Answer, id = ID) {
  const address = await replica(answer);
  const asker = new ResultAsker({ replicas: { addresses: async () => [address] }, secret: SECRET, clock: systemClock });
  askers.push(asker);
  return asker.listen(id, [address], 5_000, new AbortController().signal);
}

const body = (over: Partial<OperationRecord> = {}) => resultAnswerBody(finished(over)) as string;

describe('a replica\'s "finished" answer', () => {
  it('carries the operation, believed when signed for this very ask: the fields of its view and nothing else', async () => {
    const heard = await listen((ask) => ({ body: body(), signature: signResultAnswer(SECRET, ask, body()) }));
    expect(heard).toEqual({ record: { ...finished(), requestHash: undefined, submittedBy: undefined, dispatch: { agentId: 'a1' } } });
    expect(JSON.stringify(heard)).not.toContain('admin:root');
  });

  it('carries the error code of an operation that failed as a whole', async () => {
    const refused = body({ state: 'FAILED', message: 'invalid_input: the operation is invalid: timeoutMs: must be at most 604800000', errorCode: 'invalid_input', outcomes: [] });
    const heard = await listen((ask) => ({ body: refused, signature: signResultAnswer(SECRET, ask, refused) }));
    expect(heard).toMatchObject({ record: { state: 'FAILED', errorCode: 'invalid_input' } });
  });

  it('is only "finished" (the API reads the table) when unsigned, altered, signed with another secret or for another ask', async () => {
    let earlier: string | undefined;
    const answers: Answer[] = [
      () => ({ body: body() }),
      (ask) => ({ body: body({ message: 'altered' }), signature: signResultAnswer(SECRET, ask, body()) }),
      (ask) => ({ body: body(), signature: signResultAnswer('another-secret-0123456789abcdef0123456', ask, body()) }),
      (ask) => ({ body: body(), signature: `vra1 ${signResultAnswer(SECRET, ask, body()).slice(5).replace(/^./, (c) => (c === '0' ? '1' : '0'))}` }),
      // Replayed: the answer to an earlier ask for the same operation.
      (ask) => {
        const first = earlier === undefined;
        earlier ??= ask;
        return { body: body(), signature: signResultAnswer(SECRET, first ? ask : earlier, body()) };
      },
    ];
    for (const answer of answers.slice(0, 4)) expect(await listen(answer)).toBe('finished');
    // The replayed one: its first use is believed, the same answer to a later ask is not.
    const address = await replica(answers[4] as Answer);
    const asker = new ResultAsker({ replicas: { addresses: async () => [address] }, secret: SECRET, clock: systemClock });
    askers.push(asker);
    expect(await asker.listen(ID, [address], 5_000, new AbortController().signal)).toHaveProperty('record');
    expect(await asker.listen(ID, [address], 5_000, new AbortController().signal)).toBe('finished');
  });

  it('is only "finished" when signed for this ask but of another operation, not finished, not an operation, or over the bound', async () => {
    const signed = (b: string): Answer => (ask) => ({ body: b, signature: signResultAnswer(SECRET, ask, b) });
    expect(await listen(signed(body({ id: 'b2'.repeat(16) })))).toBe('finished');
    expect(await listen(signed(body({ state: 'RUNNING' })))).toBe('finished');
    expect(await listen(signed(JSON.stringify({ id: ID, state: 'SUCCEEDED' })))).toBe('finished');
    expect(await listen(signed('not json'))).toBe('finished');
    expect(await listen(signed(JSON.stringify({ ...JSON.parse(body({ state: 'FAILED' })), errorCode: 'not_a_code' })))).toBe('finished');
    const large = JSON.stringify({ ...JSON.parse(body()), message: 'x'.repeat(MAX_RESULT_ANSWER_BYTES) });
    expect(await listen(signed(large))).toBe('finished');
    // The replica sends none over the bound: it answers a plain "finished" for such an operation.
    expect(resultAnswerBody(finished({ message: 'x'.repeat(MAX_RESULT_ANSWER_BYTES) }))).toBeUndefined();
    expect(await listen(signed(body()), 'c3'.repeat(16))).toBe('finished');
  });
});
