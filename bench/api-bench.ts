import { performance } from 'node:perf_hooks';
import { GetCommand, QueryCommand, UpdateCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { Agent, request } from 'node:http';
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import { queryAccessParams, readAccessIndex } from '../shared/table/accounts/access.ts';
import { listVisibleAccountPage, locateVisiblePage, queryAccountRangeParams } from '../shared/table/accounts/listing.ts';
import { TestIssuer, oidcConfig } from '../test/support/oidc.ts';
import { startApiServer } from '../functions/node.ts';
import { getAccountParams, getAccounts, queryAccountsParams, updateAccountParams } from '../shared/table/accounts/records.ts';
import { CapacityMeter } from '../shared/table/core/capacity.ts';
import { appendChanges } from '../shared/table/accounts/feed.ts';
import { startEmbeddedTable } from '../shared/table/core/embedded.ts';
import { getRankChunkParams, getRankDirParams, locatePage } from '../shared/table/accounts/rank.ts';
import { prefixRanks } from '../shared/table/accounts/name-prefix.ts';
import { FACET_RANK, settleAccountIndexes } from '../shared/table/accounts/facets.ts';
import { liveSessions, putSession } from '../shared/table/agents/sessions.ts';
import { runBounded } from '../shared/table/core/bounded.ts';
import { syncSource } from '../shared/table/sources/sync.ts';
import { queryAll } from '../shared/table/core/query.ts';
import { queryAllShards } from '../shared/table/core/sharded-query.ts';
import { ACCOUNT_PARTITIONS, accountKey } from '../shared/table/accounts/keys.ts';
import { ratio, round, summarize, type Series } from './stats.ts';

export interface ApiBenchOptions {
  accounts: number;
  /** Sequential requests per GET figure. */
  reads: number;
  /** Sequential batches per POST/PATCH figure (each uses its own 100 accounts). */
  batches: number;
}

export interface Cost {
  rcu_per_req: number;
  wcu_per_req: number;
  round_trips_per_req: number;
}

export interface Figure extends Series, Cost {
  bench: 'api';
  figure: string;
  baseline: Series & Cost & { what: string };
  ratio_p50: number | null;
  ratio_p99: number | null;
  ratio_rps: number | null;
  ratio_rcu: number | null;
}

const BATCH = 100;
const ZONE = 'bench_zone';

/**
 * Runs the API call and its raw baseline alternately, `n` times each, timing every call and metering
 * its table capacity. Alternating makes both series see the same machine noise.
 */
async function measurePair(
  n: number,
  meter: CapacityMeter,
  api: (i: number) => Promise<unknown>,
  raw: (i: number) => Promise<unknown>,
): Promise<[Series & Cost, Series & Cost]> {
  const sides = [api, raw].map((fn) => ({ fn, durations: [] as number[], elapsed: 0, read: 0, write: 0, trips: 0 }));
  for (let i = 0; i < n; i++) {
    for (const side of sides) {
      const before = meter.snapshot();
      const t0 = performance.now();
      await side.fn(i);
      const d = performance.now() - t0;
      const used = meter.since(before);
      side.durations.push(d);
      side.elapsed += d;
      side.read += used.readUnits;
      side.write += used.writeUnits;
      side.trips += used.roundTrips;
    }
  }
  const [a, b] = sides.map((side) => ({
    ...summarize(side.durations, side.elapsed),
    rcu_per_req: round(side.read / n),
    wcu_per_req: round(side.write / n),
    round_trips_per_req: round(side.trips / n),
  }));
  return [a as Series & Cost, b as Series & Cost];
}

function figure(name: string, what: string, [api, raw]: [Series & Cost, Series & Cost]): Figure {
  return {
    bench: 'api',
    figure: name,
    ...api,
    baseline: { what, ...raw },
    ratio_p50: ratio(api.p50_ms, raw.p50_ms),
    ratio_p99: ratio(api.p99_ms, raw.p99_ms),
    ratio_rps: ratio(api.rps, raw.rps),
    ratio_rcu: ratio(api.rcu_per_req, raw.rcu_per_req),
  };
}

export const accountName = (i: number) => `account-${String(i).padStart(6, '0')}`;
/** The 100 accounts 100 to 199, and every account up to 9,999 (all of them at 10,000). */
const PREFIX_PAGE_1 = 'account-0001';
const PREFIX_DEEP = 'account-00';

/**
 * Seeds the accounts through the driver-config sync, serves the API over loopback HTTP, and measures
 * each endpoint beside the raw table operations it performs, in the same run.
 */
export async function runApiBench(options: ApiBenchOptions, emit: (line: Record<string, unknown>) => void): Promise<Figure[]> {
  const meter = new CapacityMeter();
  const table = await startEmbeddedTable({ meter });
  const figures: Figure[] = [];
  const out = (f: Figure) => {
    figures.push(f);
    emit(f as unknown as Record<string, unknown>);
  };
  try {
    const seedStart = performance.now();
    await syncSource(
      table,
      { id: 'driver-config', kind: 'driver-config' },
      Array.from({ length: options.accounts }, (_, i) => ({
        name: accountName(i),
        kubeconfigFile: `/etc/vendor/kubeconfigs/${accountName(i)}.yml`,
        context: `ctx-${i}`,
        namespaces: ['default', 'apps'],
        kinds: ['deployment', 'service', 'pod'],
      })),
      Date.now(),
      { concurrency: 16 },
    );
    emit({ bench: 'api', figure: 'seed', accounts: options.accounts, seconds: round((performance.now() - seedStart) / 1000) });
    await putSession(table, {
      agentId: 'bench-agent',
      zoneId: ZONE,
      replicaId: 'bench',
      connectedAt: Date.now(),
      leaseExpiresAt: Date.now() + 3_600_000,
      agentVersion: 'bench',
      staticAccounts: [],
    });

    // Callers present real JWTs from a loopback OIDC issuer, verified on every request.
    const issuer = await TestIssuer.start();
    await issuer.addKey('ES256');
    const managerToken = await issuer.token({ sub: 'bench-manager', groups: ['bench-admins'] }, { ttl: 86_400 });
    const noRolesToken = await issuer.token({ sub: 'bench-reader', groups: [] }, { ttl: 86_400 });
    let token = managerToken;
    const auth = createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: ['bench-admins'] }, { production: false });
    const server = await startApiServer(createApp({ table, auth }));
    // A keep-alive node:http client, like the SDK's own, so both sides pay the same kind of HTTP hop.
    let agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const call = (method: string, path: string, body?: unknown, bearer = token) =>
      new Promise<unknown>((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = request(
          `${server.url}${path}`,
          {
            method,
            agent,
            headers: {
              authorization: `Bearer ${bearer}`,
              ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString();
              if (res.statusCode !== 200) reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
              else resolve(JSON.parse(text));
            });
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    const get = (path: string) => call('GET', path);
    const send = (method: string, body: unknown) => call(method, '/vendor/accounts', body);
    try {
      const { tableName, client } = table;
      // The account list's reads: one Query per shard, sent together (docs/table.md#where-the-writes-land).
      const sendTogether = (inputs: readonly QueryCommandInput[]) => Promise.all(inputs.map((input) => client.send(new QueryCommand(input))));
      const everyAccountParams = (): QueryCommandInput[] => ACCOUNT_PARTITIONS.map((pk) => ({ TableName: tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }));
      const n = options.reads;
      const pick = (i: number) => accountName((i * 7919) % options.accounts);
      const deepPage = Math.min(50, Math.ceil(options.accounts / 100));

      // Warm both paths so connection set-up is not measured.
      for (let i = 0; i < 20; i++) {
        await get(`/vendor/accounts/${pick(i)}`);
        await client.send(new GetCommand(getAccountParams(tableName, pick(i))));
      }

      out(
        figure(
          'get_by_id',
          'GetItem',
          await measurePair(
            n,
            meter,
            (i) => get(`/vendor/accounts/${pick(i)}`),
            (i) => client.send(new GetCommand(getAccountParams(tableName, pick(i)))),
          ),
        ),
      );

      // What the signature check costs: each request with a token the API has not seen (verified), beside
      // the same request with a token it verified moments ago (taken from its cache of verified tokens).
      const freshTokens = await Promise.all(Array.from({ length: n }, (_, i) => issuer.token({ sub: `bench-${i}`, groups: ['bench-admins'] }, { ttl: 86_400 })));
      out(
        figure(
          'get_by_id_new_token_each_time',
          'the same GET by id with a token verified moments ago',
          await measurePair(
            n,
            meter,
            (i) => call('GET', `/vendor/accounts/${pick(i)}`, undefined, freshTokens[i]),
            (i) => call('GET', `/vendor/accounts/${pick(i)}`, undefined, managerToken),
          ),
        ),
      );

      out(
        figure(
          'list_page_1_limit_100',
          'GetItem(rank directory) + 8 x Query(one per shard, together)',
          await measurePair(
            n,
            meter,
            () => get('/vendor/accounts?page=1&limit=100'),
            async () => {
              await client.send(new GetCommand(getRankDirParams(tableName, false)));
              await sendTogether(queryAccountsParams(tableName, 100));
            },
          ),
        ),
      );

      const start = await locatePage(table, (deepPage - 1) * 100);
      const dirItem = (await client.send(new GetCommand(getRankDirParams(tableName, false)))).Item as { chunks: { id: string; n: number }[] };
      let first = 0;
      const chunk = dirItem.chunks.find((c) => (first += c.n) >= (deepPage - 1) * 100) ?? dirItem.chunks[0];
      out(
        figure(
          `list_page_${deepPage}_limit_100`,
          'GetItem(rank directory) + GetItem(rank chunk) + 8 x Query(sk > the name before the page, one per shard, together)',
          await measurePair(
            n,
            meter,
            () => get(`/vendor/accounts?page=${deepPage}&limit=100`),
            async () => {
              await client.send(new GetCommand(getRankDirParams(tableName, false)));
              await client.send(new GetCommand(getRankChunkParams(tableName, chunk?.id ?? '', false)));
              await sendTogether(queryAccountsParams(tableName, 100, start.startAfter));
            },
          ),
        ),
      );

      // `total` comes from the rank directory alone; counting items would read the whole partition.
      let before = meter.snapshot();
      await client.send(new GetCommand(getRankDirParams(tableName, false)));
      const directory = meter.since(before);
      before = meter.snapshot();
      await queryAllShards(table, everyAccountParams().map((input) => ({ ...input, Select: 'COUNT' as const })));
      const countAll = meter.since(before);
      emit({
        bench: 'api',
        figure: 'total_cost',
        rcu_total_from_rank_directory: directory.readUnits,
        rcu_counting_every_item: countAll.readUnits,
        round_trips_counting_every_item: countAll.roundTrips,
      });

      // POST and PATCH: each batch its own 100 accounts; API batches first, raw batches after them.
      const b = options.batches;
      const batch = (k: number) => Array.from({ length: BATCH }, (_, j) => accountName(k * BATCH + j));
      const rawRegister = async (names: string[], state: 'INACTIVE' | 'ACTIVE') => {
        const now = Date.now();
        const found = await getAccounts(table, names, { consistent: true });
        if (state === 'ACTIVE') await liveSessions(table, now, ZONE);
        await runBounded(
          names.map((name) => async () => {
            const current = found.get(name) as { version: number; generation: number };
            await client.send(
              new UpdateCommand(
                updateAccountParams(tableName, name, current.version, { registration: { zoneId: ZONE, at: now }, state, generation: current.generation + 1 }, now),
              ),
            );
          }),
          16,
        );
        if (state === 'ACTIVE') await appendChanges(table, names.map((name) => ({ name, action: 'assign', generation: 2, at: now })));
      };
      out(
        figure(
          'post_100_records',
          'BatchGetItem(100) + 100 x conditional UpdateItem',
          await measurePair(
            b,
            meter,
            (i) => send('POST', batch(i).map((name) => ({ name, zoneId: ZONE }))),
            (i) => rawRegister(batch(b + i), 'INACTIVE'),
          ),
        ),
      );
      out(
        figure(
          'patch_100_records',
          'BatchGetItem(100) + Query(sessions) + 100 x conditional UpdateItem + 4 x BatchWriteItem(feed)',
          await measurePair(
            b,
            meter,
            (i) => send('PATCH', batch(i).map((name) => ({ name, state: 'ACTIVE' }))),
            (i) => rawRegister(batch(b + i), 'ACTIVE'),
          ),
        ),
      );

      // The raw batches wrote their accounts without the facet index, as no writer of the service does:
      // it follows them now, so the filters below see the same accounts as a full read.
      await settleAccountIndexes(table, Array.from({ length: b * BATCH }, (_, j) => accountName(b * BATCH + j)));
      // The API server has closed the keep-alive connection meanwhile: start on a new one.
      agent.destroy();
      agent = new Agent({ keepAlive: true, maxSockets: 1 });

      // Filters by state, zone and source, in any combination: pages of the facet index. The baseline
      // is what they cost before that index: reading and judging every account item. By name prefix: a
      // run of the rank index, so the baseline is the directory, the two chunks that bound the run, and
      // the page.
      const everyAccount = () => queryAllShards(table, everyAccountParams());
      const active = 2 * b * BATCH;
      for (const [name, query, matches] of [
        ['list_state_ACTIVE', 'state=ACTIVE', active],
        ['list_state_ACTIVE_zoneId_source_driver', `state=ACTIVE&zoneId=${ZONE}&source=driver`, active],
        ['list_source_driver', 'source=driver', options.accounts],
      ] as const) {
        for (const page of [...new Set([1, Math.min(deepPage, Math.ceil(matches / 100))])]) {
          out(figure(`${name}_page_${page}_limit_100`, 'Query(every account item)', await measurePair(n, meter, () => get(`/vendor/accounts?${query}&page=${page}&limit=100`), everyAccount)));
        }
      }
      // A filtered `total` is the facet directory's counts by tag alone.
      before = meter.snapshot();
      await client.send(new GetCommand(getRankDirParams(tableName, false, FACET_RANK)));
      emit({ bench: 'api', figure: 'filtered_total_cost', rcu_total_from_facet_directory: meter.since(before).readUnits, rcu_counting_every_item: countAll.readUnits });
      for (const [prefix, page] of [[PREFIX_PAGE_1, 1], [PREFIX_DEEP, deepPage]] as const) {
        const ranks = await prefixRanks(table, prefix);
        const at = await locatePage(table, ranks.first + (page - 1) * 100);
        const dirNow = (await client.send(new GetCommand(getRankDirParams(tableName, false)))).Item as { chunks: { id: string; lo: string }[] };
        const chunkOf = (name: string) => dirNow.chunks.filter((c) => c.lo <= name).at(-1)?.id ?? '';
        out(
          figure(
            `list_name_prefix_page_${page}_limit_100`,
            'GetItem(rank directory) + 2 x GetItem(rank chunk) + 8 x Query(sk > the name before the page, one per shard, together)',
            await measurePair(
              n,
              meter,
              () => get(`/vendor/accounts?namePrefix=${prefix}&page=${page}&limit=100`),
              async () => {
                await client.send(new GetCommand(getRankDirParams(tableName, false)));
                await Promise.all([prefix, `${prefix}\uffff`].map((bound) => client.send(new GetCommand(getRankChunkParams(tableName, chunkOf(bound), false)))));
                await sendTogether(queryAccountsParams(tableName, 100, at.startAfter));
              },
            ),
          ),
        );
      }
      out(figure('account_summary', 'Query(every account item)', await measurePair(n, meter, () => get('/vendor/account-summary'), everyAccount)));
      out(figure('list_agents_limit_100', 'Query(every account item)', await measurePair(n, meter, () => get('/vendor/agents?limit=100'), everyAccount)));

      // A caller who may not read everything: restricted accounts are added among the others (one in
      // eleven), and a caller without roles lists around them. Measured last, so the figures above are
      // those of the same table as before.
      const restricted = Array.from({ length: Math.ceil(options.accounts / 10) }, (_, i) => ({
        name: `${accountName(i * 10)}-r`,
        kubeconfigFile: `/etc/vendor/kubeconfigs/${accountName(i * 10)}-r.yml`,
        namespaces: ['apps'],
        permissions: [{ READ: ['ops'] }],
      }));
      await syncSource(table, { id: 'plugin:bench', kind: 'plugin' }, restricted, Date.now(), { concurrency: 16 });
      const hidden = new Set((await readAccessIndex(table)).keys());
      token = noRolesToken;
      for (const page of [1, deepPage]) {
        const located = await locateVisiblePage(table, (page - 1) * 100, 100, hidden);
        const dirNow = (await client.send(new GetCommand(getRankDirParams(tableName, false)))).Item as { chunks: { id: string; lo: string }[] };
        const chunkIds = [...new Set(located.names.map((name) => dirNow.chunks.filter((c) => c.lo <= name).at(-1)?.id ?? ''))];
        const check = await listVisibleAccountPage(table, page, 100, hidden);
        const expected = Math.min(100, options.accounts - (page - 1) * 100);
        if (check.records.length !== expected || check.total !== options.accounts || check.records.some((r) => r.name.endsWith('-r'))) {
          throw new Error('restricted caller sees the wrong accounts');
        }
        out(
          figure(
            `list_page_${page}_limit_100_caller_without_roles`,
            `Query(access index, ${hidden.size} entries) + GetItem(rank directory) + ${chunkIds.length} x GetItem(rank chunk) + Query(name range of ${located.span}, one per shard holding a name of the page)`,
            await measurePair(
              n,
              meter,
              () => get(`/vendor/accounts?page=${page}&limit=100`),
              async () => {
                await queryAll(table, queryAccessParams(tableName));
                await client.send(new GetCommand(getRankDirParams(tableName, false)));
                await Promise.all(chunkIds.map((id) => client.send(new GetCommand(getRankChunkParams(tableName, id, false)))));
                await queryAllShards(table, queryAccountRangeParams(tableName, located.names[0] as string, located.names.at(-1) as string, [...new Set(located.names.map((name) => accountKey(name).pk))]));
              },
            ),
          ),
        );
      }
    } finally {
      agent.destroy();
      await server.close();
      await issuer.close();
    }
  } finally {
    await table.close();
  }
  return figures;
}
