import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../shared/log.ts';
import { encodeResultAsk, RESULT_ASK_HEADER, RESULT_ASK_PATH } from '../../shared/wake/result-ask.ts';
import { RESULT_ANSWER_HEADER, resultAnswerSigned } from '../../shared/wake/result-answer.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { CONNECTIONS_PER_WAITER, startResultEndpoint, type ResultAskOutcome } from './result-endpoint.ts';
import { ResultNews } from './result-news.ts';

const SECRET = 'result-endpoint-secret-0123456789abcdef';

async function endpoint(clock: ManualClock, limits: { maxPerSecond?: number; maxResultWaiters?: number } = {}) {
  const news = new ResultNews(clock, 60_000, 3);
  const outcomes: ResultAskOutcome[] = [];
  const e = await startResultEndpoint({
    config: { host: '127.0.0.1', maxAgeMs: 30_000, maxResultAsksPerSecond: limits.maxPerSecond ?? 100, resultHoldMs: 20_000, maxResultWaiters: limits.maxResultWaiters ?? 100 },
    port: 0,
    secret: SECRET,
    clock,
    log: silentLogger(),
    news,
    counted: (o) => outcomes.push(o),
  });
  return { e, news, outcomes };
}

function ask(port: number, header: string, method = 'GET', path = RESULT_ASK_PATH): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { [RESULT_ASK_HEADER]: header } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function fullAsk(port: number, header: string): Promise<{ status: number; body: string; signature: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: RESULT_ASK_PATH, headers: { [RESULT_ASK_HEADER]: header } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, signature: res.headers[RESULT_ANSWER_HEADER] as string | undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the result-ask endpoint', () => {
  it('holds a valid ask until the operation finishes here, and answers one that finished just before at once', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { e, news, outcomes } = await endpoint(clock);
    try {
      const held = ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()));
      await vi.waitFor(() => expect(news.waiting).toBe(1));
      news.finished('op-1');
      expect(await held).toBe(200);
      expect(await ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()))).toBe(200);
      // Another operation: held for its wait, then "not yet".
      const other = ask(e.port, encodeResultAsk(SECRET, 'op-2', 5_000, clock.now()));
      await vi.waitFor(() => expect(news.waiting).toBe(1));
      clock.advance(5_000);
      expect(await other).toBe(204);
      expect(outcomes).toEqual(['finished', 'finished', 'not_yet']);
      expect(news.waiting).toBe(0);
    } finally {
      await e.close();
    }
  });

  it('refuses asks over the rate (429) and over maxResultWaiters (503) at once, and anything but the ask path', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { e, news, outcomes } = await endpoint(clock, { maxPerSecond: 3, maxResultWaiters: 1 });
    try {
      const held = ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()));
      await vi.waitFor(() => expect(news.waiting).toBe(1));
      expect(await ask(e.port, encodeResultAsk(SECRET, 'op-2', 10_000, clock.now()))).toBe(503);
      expect(await ask(e.port, encodeResultAsk(SECRET, 'op-3', 10_000, clock.now()))).toBe(503);
      expect(await ask(e.port, encodeResultAsk(SECRET, 'op-4', 10_000, clock.now()))).toBe(429);
      expect(await ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()), 'POST')).toBe(403);
      expect(await ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()), 'GET', '/other')).toBe(403);
      news.finished('op-1');
      expect(await held).toBe(200);
      expect(outcomes).toEqual(['busy', 'busy', 'rate_limited', 'malformed', 'malformed', 'finished']);
    } finally {
      await e.close();
    }
  });

  it('answers "finished" with the kept operation, signed together with the ask it answers', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { e, news } = await endpoint(clock);
    try {
      news.finished('op-1', '{"id":"op-1"}');
      const header = encodeResultAsk(SECRET, 'op-1', 10_000, clock.now());
      const answer = await fullAsk(e.port, header);
      expect(answer).toMatchObject({ status: 200, body: '{"id":"op-1"}' });
      expect(resultAnswerSigned(SECRET, header, answer.signature, answer.body)).toBe(true);
      expect(resultAnswerSigned(SECRET, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()), answer.signature, answer.body)).toBe(false);
      // Finished without a kept body: a plain "finished".
      news.finished('op-2');
      expect(await fullAsk(e.port, encodeResultAsk(SECRET, 'op-2', 10_000, clock.now()))).toEqual({ status: 200, body: '', signature: undefined });
    } finally {
      await e.close();
    }
  });

  it('holds at most CONNECTIONS_PER_WAITER connections per ask it may hold: more are closed as they come', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const { e, news } = await endpoint(clock, { maxResultWaiters: 2 });
    const idle: Socket[] = [];
    try {
      for (let i = 0; i < 2 * CONNECTIONS_PER_WAITER; i++) {
        const socket = connect(e.port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        idle.push(socket);
      }
      news.finished('op-1');
      // Full: an ask gets no answer but a closed connection.
      await expect(ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()))).rejects.toThrow();
      for (const socket of idle.splice(0)) socket.destroy();
      await vi.waitFor(async () => expect(await ask(e.port, encodeResultAsk(SECRET, 'op-1', 10_000, clock.now()))).toBe(200), { timeout: 5000 });
    } finally {
      for (const socket of idle) socket.destroy();
      await e.close();
    }
  });

  it('keeps at most maxBodyChars of answers: the oldest lose theirs first, and are still known finished', () => {
    const clock = new ManualClock(1_700_000_000_000);
    const news = new ResultNews(clock, 60_000, 10, 10);
    news.finished('a', 'aaaa');
    news.finished('b', 'bbbb');
    news.finished('c', 'cccc');
    expect(['a', 'b', 'c'].map((id) => news.answerOf(id))).toEqual([undefined, 'bbbb', 'cccc']);
    expect(news.finishedHere('a')).toBe(true);
    // Finished again (a second finish for the same id): its earlier body no longer counts.
    news.finished('b', 'BB');
    news.finished('d', 'dd');
    expect(['b', 'c', 'd'].map((id) => news.answerOf(id))).toEqual(['BB', 'cccc', 'dd']);
    clock.advance(60_001);
    expect(news.answerOf('d')).toBeUndefined();
  });

  it('remembers at most maxKept finished operations, the oldest forgotten first', () => {
    const clock = new ManualClock(1_700_000_000_000);
    const news = new ResultNews(clock, 60_000, 3);
    for (const id of ['a', 'b', 'c', 'd']) news.finished(id);
    expect(['a', 'b', 'c', 'd'].map((id) => news.finishedHere(id))).toEqual([false, true, true, true]);
    clock.advance(60_001);
    expect(news.finishedHere('d')).toBe(false);
  });
});
