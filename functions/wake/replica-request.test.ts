/** One request to a replica's wake port over real HTTP: which answers are read, and how far. */
import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { requestReplica, type ReplicaRequest } from './replica-request.ts';

const servers: Server[] = [];
const agent = new Agent({ keepAlive: true });
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

/** A replica that answers with `status` and `body`, and records what it was sent. */
async function replica(status: number, body: string, seen: { method?: string; body?: string } = {}): Promise<{ host: string; port: number }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.method = req.method;
      seen.body = Buffer.concat(chunks).toString('utf8');
      res.writeHead(status, { 'x-answer': 'yes' }).end(body);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { host: '127.0.0.1', port: (server.address() as AddressInfo).port };
}

const ask = (to: { host: string; port: number }, over: Partial<ReplicaRequest> = {}): Promise<ReturnType<typeof requestReplica> extends Promise<infer A> ? A : never> =>
  requestReplica({ ...to, path: '/v1/x', method: 'GET', headers: {}, agent, signal: new AbortController().signal, okStatus: 200, maxBodyBytes: 16, ...over });

describe('requestReplica', () => {
  it('reads the body of the answer with the expected status, with its headers, and sends its own body', async () => {
    const seen: { method?: string; body?: string } = {};
    const to = await replica(200, 'finished', seen);
    let sent = 0;
    expect(await ask(to, { method: 'POST', body: '{"a":1}', sent: () => sent++ })).toMatchObject({ status: 200, body: 'finished', headers: { 'x-answer': 'yes' } });
    expect(seen).toEqual({ method: 'POST', body: '{"a":1}' });
    expect(sent).toBe(1);
  });

  it('reads no body of any other status', async () => {
    const to = await replica(403, 'a body nobody asked for');
    expect(await ask(to)).toMatchObject({ status: 403, body: undefined });
  });

  it('stops reading an answer past its bound', async () => {
    const to = await replica(200, 'x'.repeat(64 * 1024));
    expect(await ask(to)).toMatchObject({ status: 200, body: 'oversized' });
    const exact = await replica(200, 'x'.repeat(16));
    expect(await ask(exact)).toMatchObject({ status: 200, body: 'x'.repeat(16) });
  });

  it('is broken when nothing answers, when the replica is silent past the timeout, and when aborted', async () => {
    const closed = await replica(200, '');
    await new Promise((r) => servers.pop()!.close(r));
    expect(await ask(closed)).toBe('broken');
    const silent = createServer(() => undefined);
    servers.push(silent);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const to = { host: '127.0.0.1', port: (silent.address() as AddressInfo).port };
    expect(await ask(to, { timeoutMs: 50 })).toBe('broken');
    const abort = new AbortController();
    const pending = ask(to, { signal: abort.signal });
    abort.abort();
    expect(await pending).toBe('broken');
  });
});
