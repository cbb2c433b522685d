import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedTable, type EmbeddedTable } from '../shared/table/embedded.ts';
import { syncSource } from '../shared/table/sources.ts';

let table: EmbeddedTable;
beforeAll(async () => {
  table = await startEmbeddedTable();
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, [{ name: 'prod' }], Date.now());
});
afterAll(() => table.close());

function event(method: string, path: string, query = '') {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query,
    headers: { host: 'api.example.test' },
    requestContext: {
      accountId: '1',
      apiId: 'api',
      domainName: 'api.example.test',
      domainPrefix: 'api',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'r',
      routeKey: '$default',
      stage: '$default',
      time: '',
      timeEpoch: 0,
    },
    isBase64Encoded: false,
  };
}

describe('Lambda handler', () => {
  it('serves the same app from the table named in the environment', async () => {
    Object.assign(process.env, {
      VENDOR_TABLE_NAME: table.tableName,
      VENDOR_DYNAMODB_ENDPOINT: table.endpoint,
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    const { handler } = await import('./lambda.ts');
    const invoke = handler as unknown as (e: unknown, ctx: unknown) => Promise<{ statusCode: number; body: string; headers: Record<string, string> }>;
    const list = await invoke(event('GET', '/vendor/accounts', 'limit=5'), {});
    expect(list.statusCode).toBe(200);
    expect(JSON.parse(list.body)).toMatchObject({ page: 1, limit: 5, total: 1, items: [{ name: 'prod' }] });
    const missing = await invoke(event('GET', '/vendor/accounts/nope'), {});
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toBe('application/problem+json');
  });
});
