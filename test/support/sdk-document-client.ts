import { Readable } from 'node:stream';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HttpResponse, type HttpRequest } from '@smithy/core/transport';
import { STORE_CONNECTION_TIMEOUT_MS, STORE_MAX_ATTEMPTS, STORE_REQUEST_TIMEOUT_MS } from '../../shared/table/core/client.ts';
import { TableSha256 } from '../../shared/table/core/sha256.ts';

/**
 * The AWS SDK's own document client (`DynamoDBDocumentClient` over a `DynamoDBClient`), built with the
 * table client's timeouts, retries, hash and marshalling options but none of its other cuts: what the
 * table client is compared with, request by request (shared/table/core/document-client.test.ts) and
 * in CPU per request (bench/table-client.ts).
 */
export function sdkDocumentClient(options: { endpoint?: string; region?: string; credentials?: DynamoDBClientConfig['credentials'] }): DynamoDBDocumentClient {
  const base = new DynamoDBClient({
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    region: options.region ?? 'local',
    credentials: options.credentials ?? { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: STORE_MAX_ATTEMPTS,
    sha256: TableSha256,
    requestHandler: { connectionTimeout: STORE_CONNECTION_TIMEOUT_MS, requestTimeout: STORE_REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
  });
  base.middlewareStack.remove('loggerMiddleware');
  return DynamoDBDocumentClient.from(base, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false } });
}

export interface CannedAnswer {
  status?: number;
  body: unknown;
}

/** A request as the handler received it, its body as text. */
export interface SeenRequest {
  request: HttpRequest;
  body: string;
}

/**
 * A request handler that answers from memory, without a network: `answer` is given the operation
 * (`GetItem`, from `X-Amz-Target`) and the request; every request is kept in `seen`. Installed on a
 * client with `answerFromMemory(client, ...)` before its first request.
 */
export function cannedHandler(answer: (operation: string, request: HttpRequest) => CannedAnswer): {
  handle(request: HttpRequest): Promise<{ response: HttpResponse }>;
  destroy(): void;
  seen: SeenRequest[];
  keep: boolean;
} {
  const seen: SeenRequest[] = [];
  const handler = {
    seen,
    /** Whether to keep what was sent (tests) or not (benchmarks, which send thousands). */
    keep: true,
    async handle(request: HttpRequest) {
      const target = String(request.headers['x-amz-target'] ?? '');
      if (handler.keep) seen.push({ request, body: typeof request.body === 'string' ? request.body : Buffer.from(request.body as Uint8Array).toString('utf8') });
      const { status = 200, body } = answer(target.slice(target.indexOf('.') + 1), request);
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
      return {
        response: new HttpResponse({
          statusCode: status,
          headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(bytes.length), 'x-amzn-requestid': 'canned' },
          body: Readable.from([bytes]),
        }),
      };
    },
    destroy() {},
  };
  return handler;
}

/** Sends every request of `client` to `handler` instead of the network. */
export function answerFromMemory(client: { config: object }, handler: ReturnType<typeof cannedHandler>): void {
  (client.config as { requestHandler: unknown }).requestHandler = handler;
}
