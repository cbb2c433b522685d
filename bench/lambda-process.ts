/**
 * The management API as it is deployed: the Lambda entry point (functions/lambda.ts, production mode,
 * callers authenticated by the OIDC issuer of its SST links, the table from the environment), in a
 * process of its own, behind a minimal HTTP-to-Lambda adapter standing for API Gateway (HTTP API,
 * payload 2.0). Each request becomes one invocation of the handler; invocations overlap, as many warm
 * Lambda containers would. Prints one JSON line, `{"port":N}`, once it listens; SIGTERM stops it.
 *
 * The environment carries what the deployment gives the function: VENDOR_TABLE_NAME,
 * VENDOR_DYNAMODB_ENDPOINT and the SST links (SST_RESOURCE_VendorOidcIssuer, ...).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathTrace } from '../shared/operations/path-trace.ts';

interface LambdaResult {
  statusCode: number;
  headers?: Record<string, string>;
  multiValueHeaders?: Record<string, string[]>;
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
}
type Invoke = (event: unknown, context: unknown) => Promise<LambdaResult>;

const { handler } = (await import('../functions/lambda.ts')) as unknown as { handler: Invoke };

let requests = 0;

/** The API Gateway HTTP API (payload 2.0) event of one request. */
function eventOf(req: IncomingMessage, body: Buffer): unknown {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  const method = req.method ?? 'GET';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    requestContext: {
      accountId: 'bench',
      apiId: 'bench',
      domainName: headers.host ?? '127.0.0.1',
      domainPrefix: 'bench',
      http: { method, path: url.pathname, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: String(++requests),
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: Date.now(),
    },
    ...(body.length === 0 ? {} : { body: body.toString('base64') }),
    isBase64Encoded: body.length > 0,
  };
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    // The path trace (bench only): the request is known by its Idempotency-Key until it has an operation id.
    const traced = pathTrace === undefined ? undefined : req.headers['idempotency-key'];
    if (typeof traced === 'string') pathTrace?.('adapter.request', traced);
    handler(eventOf(req, Buffer.concat(chunks)), { awsRequestId: String(requests), getRemainingTimeInMillis: () => 900_000 }).then(
      (result) => {
        const body = result.body === undefined ? Buffer.alloc(0) : Buffer.from(result.body, result.isBase64Encoded === true ? 'base64' : 'utf8');
        const headers: Record<string, string | string[]> = { ...result.headers, ...result.multiValueHeaders, 'content-length': String(body.length) };
        if (result.cookies !== undefined) headers['set-cookie'] = result.cookies;
        if (typeof traced === 'string') pathTrace?.('adapter.responded', traced);
        res.writeHead(result.statusCode, headers).end(body);
      },
      (err: unknown) => {
        // As API Gateway answers a failed invocation.
        process.stderr.write(`invocation failed: ${err instanceof Error ? err.message : String(err)}\n`);
        res.writeHead(502, { 'content-type': 'application/json' }).end('{"message":"Internal Server Error"}');
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`));
const stop = (): void => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
