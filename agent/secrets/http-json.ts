import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { VendorError } from '../../shared/errors.ts';

export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  servername?: string;
  rejectUnauthorized: boolean;
}

export interface JsonRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  tls?: TlsOptions;
}

export interface JsonResponse {
  status: number;
  /** The parsed body, or undefined when it was empty or not JSON. */
  body: unknown;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * One JSON request over node:http(s), where the TLS trust and client certificate can be set per
 * call. Failures to connect or to answer in time are `unavailable`; the message names the origin
 * and the socket error code only, never a header or a body. A request that met a kept-alive
 * connection the server had just closed is sent once more on a new one, as Node's docs advise.
 */
export async function requestJson(req: JsonRequest): Promise<JsonResponse> {
  try {
    return await sendOnce(req);
  } catch (e) {
    if (!(e instanceof StaleConnection)) throw e;
    return sendOnce(req);
  }
}

class StaleConnection extends Error {}

function sendOnce(req: JsonRequest): Promise<JsonResponse> {
  const payload = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
  const options: RequestOptions = {
    method: req.method,
    headers: {
      accept: 'application/json',
      ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(payload.length) }),
      ...req.headers,
    },
    timeout: req.timeoutMs,
    ...(req.url.protocol === 'https:' ? req.tls : {}),
  };
  const send = req.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => reject(new VendorError('unavailable', `cannot reach ${req.url.origin}: ${reason}`));
    let answered = false;
    const call = send(req.url, options, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          call.destroy();
          fail(`answer larger than ${MAX_BODY_BYTES} bytes`);
        } else chunks.push(chunk);
      });
      res.on('error', (e: NodeJS.ErrnoException) => fail(e.code ?? 'connection error'));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text === '' ? undefined : JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    call.on('timeout', () => {
      call.destroy();
      fail(`no answer within ${req.timeoutMs} ms`);
    });
    call.on('error', (e: NodeJS.ErrnoException) => {
      if (!answered && call.reusedSocket && e.code === 'ECONNRESET') reject(new StaleConnection());
      else fail(e.code ?? 'connection error');
    });
    call.end(payload);
  });
}
