import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isVendorError } from '../../shared/errors.ts';
import { requestJson } from './http-json.ts';

let server: Server | undefined;

afterEach(async () => {
  const s = server;
  server = undefined;
  if (s !== undefined) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<URL> {
  server = createServer(handler);
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/x`);
}

describe('requestJson', () => {
  it('sends once more on a new connection when a kept-alive one was closed under it', async () => {
    const sockets = new Set<Socket>();
    let served = 0;
    const url = await listen((req, res) => {
      served += 1;
      sockets.add(req.socket);
      // The second request arrives on the kept-alive socket of the first; drop it unanswered.
      if (served === 2) {
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' });
      res.end(JSON.stringify({ served }));
    });
    expect(await requestJson({ method: 'GET', url, timeoutMs: 5000 })).toEqual({ status: 200, body: { served: 1 } });
    expect(await requestJson({ method: 'GET', url, timeoutMs: 5000 })).toEqual({ status: 200, body: { served: 3 } });
    expect(sockets.size).toBe(2);
  });

  it('reports a server that never answers as unavailable after the timeout', async () => {
    const url = await listen(() => undefined);
    const error = await requestJson({ method: 'GET', url, timeoutMs: 50 }).catch((e: unknown) => e);
    expect(isVendorError(error) && error.code).toBe('unavailable');
    expect((error as Error).message).toBe(`cannot reach ${url.origin}: no answer within 50 ms`);
  });

  it('gives an undefined body for an answer that is not JSON and refuses huge answers', async () => {
    const url = await listen((req, res) => {
      res.writeHead(502);
      res.end(req.url === '/v1/x' ? '<html>bad gateway</html>' : 'x'.repeat(5 * 1024 * 1024));
    });
    expect(await requestJson({ method: 'GET', url, timeoutMs: 5000 })).toEqual({ status: 502, body: undefined });
    const huge = await requestJson({ method: 'GET', url: new URL('/v1/huge', url), timeoutMs: 5000 }).catch((e: unknown) => e);
    expect((huge as Error).message).toContain('answer larger than');
  });
});
