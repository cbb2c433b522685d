import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/transport';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestTables } from '../../../test/support/table.ts';
import { createDocumentClient } from './client.ts';

const REGION = 'eu-west-1';
const KEYS = { accessKeyId: 'AKIDVENDORTEST', secretAccessKey: 'the-one-secret-the-table-knows' };

/**
 * In front of dynalite (which checks no signature), DynamoDB's check: the request is signed again with
 * the credentials the table knows, by the SDK's own signer and hash, over the headers the request says
 * it signed, and refused unless the signatures agree.
 */
function signatureCheckingProxy(upstream: string): Promise<{ endpoint: string; refused: () => number; close(): Promise<void> }> {
  const target = new URL(upstream);
  const signer = new SignatureV4({ service: 'dynamodb', region: REGION, credentials: KEYS, sha256: Sha256 });
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const authorization = String(req.headers.authorization ?? '');
        const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
        const headers: Record<string, string> = {};
        for (const name of signedHeaders) headers[name] = String(req.headers[name] ?? '');
        const [hostname, port] = String(req.headers.host).split(':');
        const unsigned = new HttpRequest({ method: req.method ?? 'POST', protocol: 'http:', hostname: hostname ?? '', ...(port === undefined ? {} : { port: Number(port) }), path: req.url ?? '/', headers, body: body.toString('utf8') });
        const amzDate = String(req.headers['x-amz-date'] ?? '');
        const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
        const expected = ((await signer.sign(unsigned, { signingDate })) as HttpRequest).headers.authorization;
        if (signedHeaders.length === 0 || expected !== authorization) {
          refused++;
          res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' }).end(
            JSON.stringify({ __type: 'com.amazon.coral.service#InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' }),
          );
          return;
        }
        const forward = httpRequest({ hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 500, answer.headers);
          answer.pipe(res);
        });
        forward.end(body);
      })();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        refused: () => refused,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    ),
  );
}

describe('the table client’s signatures', () => {
  const tables = useTestTables();
  let proxy: Awaited<ReturnType<typeof signatureCheckingProxy>>;
  beforeAll(async () => {
    proxy = await signatureCheckingProxy(tables.endpoint);
  });
  afterAll(() => proxy.close());

  it('are accepted by a table that checks them, and a request signed with the wrong secret is refused and changes nothing', async () => {
    const { tableName } = await tables.fresh();
    const signed = createDocumentClient({ endpoint: proxy.endpoint, region: REGION, credentials: KEYS, maxAttempts: 1 });
    const wrong = createDocumentClient({ endpoint: proxy.endpoint, region: REGION, credentials: { ...KEYS, secretAccessKey: 'not-the-secret' }, maxAttempts: 1 });
    const item = { pk: 'SIGNED', sk: 'one', n: 1, bytes: new Uint8Array([1, 2]), tags: new Set(['a']) };
    await signed.send(new PutCommand({ TableName: tableName, Item: item }));
    expect((await signed.send(new GetCommand({ TableName: tableName, Key: { pk: 'SIGNED', sk: 'one' }, ConsistentRead: true }))).Item).toEqual(item);
    expect(proxy.refused()).toBe(0);

    await expect(wrong.send(new PutCommand({ TableName: tableName, Item: { pk: 'SIGNED', sk: 'two' } }))).rejects.toMatchObject({ name: 'InvalidSignatureException' });
    expect(proxy.refused()).toBe(1);
    expect((await signed.send(new GetCommand({ TableName: tableName, Key: { pk: 'SIGNED', sk: 'two' }, ConsistentRead: true }))).Item).toBeUndefined();
  });
});
