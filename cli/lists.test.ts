import { describe, expect, it } from 'vitest';
import { main } from './main.ts';

/** A fake API answering each GET from `pages` by its path and query, recording the URLs asked for. */
function pagedApi(pages: Record<string, unknown>) {
  const urls: string[] = [];
  const fetchImpl = async (url: string | URL | Request) => {
    const path = String(url).replace('http://api.test', '');
    urls.push(path);
    const body = pages[path];
    return new Response(JSON.stringify(body ?? { title: 'Not found', code: 'not_found' }), { status: body === undefined ? 404 : 200 });
  };
  return { urls, fetch: fetchImpl as typeof fetch };
}

async function run(argv: string[], fetchImpl: typeof fetch) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (t) => void out.push(t), err: (t) => void err.push(t), env: { VENDOR_API_URL: 'http://api.test' }, stdin: async () => '', fetch: fetchImpl });
  return { code, out: out.join(''), err: err.join('') };
}

// Answers as the API serves them (shared/answers/): vendorctl reads them with the API's own schemas.
const T0 = '2026-11-28T10:00:00.000Z';
const agent = (agentId: string) => ({ agentId, zoneId: 'z', identity: 'fleet', version: '1', replicaId: 'r1', connectedAt: T0, lastHeartbeatAt: T0, accounts: [{ name: 'a', caching: true }], caching: 1 });
const operation = (id: string) => ({ id, account: 'prod', action: 'deploy', state: 'SUCCEEDED', idempotencyKey: `key-${id}`, objects: 1, createdAt: T0, updatedAt: T0, attempts: 1, outcomes: [] });

describe('vendorctl lists that span pages', () => {
  it('agents list reads numbered pages until total, with the zone filter on each', async () => {
    const api = pagedApi({
      '/vendor/agents?page=1&limit=500&zoneId=z': { items: [agent('a1')], page: 1, limit: 500, total: 2 },
      '/vendor/agents?page=2&limit=500&zoneId=z': { items: [agent('a2')], page: 2, limit: 500, total: 2 },
    });
    const result = await run(['agents', 'list', '--zone', 'z', '-o', 'json'], api.fetch);
    expect(result.code, result.err).toBe(0);
    expect((JSON.parse(result.out) as { agentId: string }[]).map((a) => a.agentId)).toEqual(['a1', 'a2']);
    expect(api.urls).toHaveLength(2);
  });

  it('refuses an answer that is not what the API serves, saying which answer, and prints nothing', async () => {
    const api = pagedApi({ '/vendor/agents?page=1&limit=500': { items: [{ ...agent('a1'), connectedAt: 'yesterday' }], page: 1, limit: 500, total: 1 } });
    const result = await run(['agents', 'list'], api.fetch);
    expect(result.code).toBe(3);
    expect(result.err).toMatch(/unexpected answer from the API for the agent list/);
    expect(result.out).toBe('');
  });

  it('operations list follows next as after until there is none', async () => {
    const api = pagedApi({
      '/vendor/accounts/prod/operations?limit=200&state=SUCCEEDED': { items: [operation('o2')], next: 'p1' },
      '/vendor/accounts/prod/operations?limit=200&after=p1&state=SUCCEEDED': { items: [operation('o1')] },
    });
    const result = await run(['operations', 'list', 'prod', '--state', 'SUCCEEDED'], api.fetch);
    expect(result.code, result.err).toBe(0);
    expect(result.out).toMatch(/^ID +ACTION +STATE +OBJECTS +CREATED +ERROR +MESSAGE\no2 +deploy +SUCCEEDED +1 +2026-11-28T10:00:00.000Z +- +-\no1 +deploy +SUCCEEDED +1 +2026-11-28T10:00:00.000Z +- +-\n$/);
  });

  it('operations list shows a failed operation\'s error code in its own column, beside its message', async () => {
    const failed = { ...operation('o3'), state: 'FAILED', errorCode: 'timeout', message: 'no result within 300 s' };
    const api = pagedApi({ '/vendor/accounts/prod/operations?limit=200': { items: [failed, operation('o2')] } });
    const result = await run(['operations', 'list', 'prod'], api.fetch);
    expect(result.code, result.err).toBe(0);
    expect(result.out).toMatch(/^ID +ACTION +STATE +OBJECTS +CREATED +ERROR +MESSAGE\no3 +deploy +FAILED +1 +2026-11-28T10:00:00.000Z +timeout +no result within 300 s\no2 +deploy +SUCCEEDED +1 +2026-11-28T10:00:00.000Z +- +-\n$/);
  });
});
