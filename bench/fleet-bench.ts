/**
 * `npm run bench:fleet`: the control plane as deployed, at fleet size, on loopback. Three driver
 * replicas (`driver/main.ts`, each a process of its own, behind a TCP balancer), the management API
 * (bench/fleet-api.ts) and the table (bench/fleet-table.ts, which counts every request) in processes
 * of their own; 50 agents in the bench process: protocol clients (test/support/protocol-agent.ts:
 * the agent's own `DriverConnection`, confirming at once) in zones of two, and two full agents of
 * `agent/` in a zone of their own, whose accounts point at the test Kubernetes API server.
 *
 * Phases, one JSON line each, then one line of targets:
 * - `activate`: 10,000 accounts activated through the API in PATCH batches of 1,000; the time until
 *   every account is ACTIVE (its first confirmation) and until every agent of its zone confirmed it;
 *   table requests per account; CPU and memory of every process. Target: all ACTIVE within 15 s.
 * - `spread_after_activation`: caching roles per agent, per zone, once settled.
 * - `replica_killed`: one replica killed (SIGKILL) with operations just queued; the time until every
 *   agent it held has a session on another replica, and until every account whose caching agent was
 *   among them is cached again (the caching agent has a session and was told its role at the item's
 *   epoch on it); accounts and operations lost. Target: both within 15 s, nothing lost.
 * - `agent_joined`, `agent_left`: one agent joins a zone, one leaves; the time until the zone's roles
 *   are spread evenly again, the roles moved, and the fewest moves an even spread needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { AccountRecord } from '../shared/accounts/model.ts';
import { MAX_BATCH } from '../shared/accounts/schema.ts';
import { createDocumentClient, type TableRef } from '../shared/table/core/client.ts';
import { getAccounts } from '../shared/table/accounts/records.ts';
import { startTestApiServer } from '../test/kube/index.ts';
import { AGENT_TOKEN, AccountsWorld, KUBE_TOKEN, type TestAgent } from '../test/support/accounts-world.ts';
import { ProtocolAgent } from '../test/support/protocol-agent.ts';
import { tableProcessEnv } from '../test/support/table-env.ts';
import { startTcpBalancer } from '../test/support/tcp-balancer.ts';
import { round } from './stats.ts';
import { itemBytes, partitionWrites, writeUnits, type WritesPerSecond } from './fleet-partitions.ts';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { PK, PK_PREFIX } from '../shared/table/core/keys.ts';
import { accountKey, changeKey } from '../shared/table/accounts/keys.ts';
import { cpuProfileArgs, loadAverage, ownCpuMs, procStats, startDriverProcess, type DriverProcess, type Line } from './support.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** How long each process's idle CPU is measured before the activation. */
const IDLE_MS = 5000;
const TOKEN = 'bench-fleet-agent-token-000000001';
const ADMIN_TOKEN = 'bench-fleet-admin-token-0123456789abcdef';
/** The zone of the full agents (`<deployment>_<namespace>` of AccountsWorld's agents). */
const REAL_ZONE = 'vendor-agent_infra';
export const TARGET_MS = 15_000;

export interface FleetOptions {
  accounts: number;
  /** Zones of protocol agents, each with `agentsPerZone`. */
  zones: number;
  agentsPerZone: number;
  /** Full agents, in a zone of their own holding `realAccounts` of the accounts. */
  realAgents: number;
  realAccounts: number;
  operations: number;
  /** How long each phase may take before it is reported as not finished. */
  phaseLimitMs: number;
}

export const FLEET_DEFAULTS: FleetOptions = { accounts: 10_000, zones: 24, agentsPerZone: 2, realAgents: 2, realAccounts: 20, operations: 200, phaseLimitMs: 300_000 };

/** Caching roles per agent of one zone, and how far from even. */
export interface ZoneSpread {
  zone: string;
  accounts: number;
  agents: number;
  min: number;
  max: number;
  /** Every agent caches floor(M/N) or ceil(M/N) and every account has a live caching agent. */
  even: boolean;
}

/** Reduces caching roles (account → agent) to a zone's spread over its live agents. */
export function zoneSpread(zone: string, holders: readonly (string | undefined)[], agents: readonly string[]): ZoneSpread {
  const counts = new Map<string, number>(agents.map((a) => [a, 0]));
  let orphaned = 0;
  for (const h of holders) {
    if (h !== undefined && counts.has(h)) counts.set(h, (counts.get(h) ?? 0) + 1);
    else orphaned++;
  }
  const values = [...counts.values()];
  const min = values.length === 0 ? 0 : Math.min(...values);
  const max = values.length === 0 ? 0 : Math.max(...values);
  const floor = agents.length === 0 ? 0 : Math.floor(holders.length / agents.length);
  const ceil = agents.length === 0 ? 0 : Math.ceil(holders.length / agents.length);
  return { zone, accounts: holders.length, agents: agents.length, min, max, even: orphaned === 0 && min >= floor && max <= ceil };
}

/** The fewest role moves that take a zone from `counts` to an even spread (the floor any spread rule has). */
export function fewestMovesToEven(counts: readonly number[]): number {
  const total = counts.reduce((a, b) => a + b, 0);
  if (counts.length === 0) return 0;
  const floor = Math.floor(total / counts.length);
  const above = counts.filter((c) => c > floor);
  return above.reduce((sum, c) => sum + c - floor, 0) - Math.min(total % counts.length, above.length);
}

/** Table requests per account, by operation, from two counts of the table process. */
export function perAccount(before: Record<string, number>, after: Record<string, number>, accounts: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [op, n] of Object.entries(after)) {
    const d = n - (before[op] ?? 0);
    if (d > 0) out[op] = round(d / accounts, 3);
  }
  return out;
}

/** When the given shares of `total` accounts had become ACTIVE (ms since the first PATCH); null for a share not reached. */
export function activePercentiles(times: readonly number[], total: number): Record<'p50' | 'p90' | 'p99' | 'all', number | null> {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (share: number) => {
    const t = sorted[Math.ceil(total * share) - 1];
    return t === undefined ? null : round(t);
  };
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), all: at(1) };
}

interface TableProcess {
  endpoint: string;
  tableName: string;
  pid: number;
  counts(): Promise<TableCounts>;
  close(): Promise<void>;
}

/** Requests so far by operation, in all and by the sending process (its `AWS_SDK_UA_APP_ID`). */
export interface TableCounts {
  counts: Record<string, number>;
  byProcess: Record<string, Record<string, number>>;
  /** With `BENCH_TABLE_PARTITIONS=1`: items written per partition key per second (bench/fleet-partitions.ts). */
  writesPerSecond?: WritesPerSecond;
}

/** The size of up to `limit` items of partition `pk` (DynamoDB's item size), and the write units one write of the largest costs. */
async function partitionItemBytes(db: TableRef, pk: string, limit = 50): Promise<{ items: number; mean_bytes: number; max_bytes: number; wcu_per_write: number } | undefined> {
  const page = await db.client.send(new QueryCommand({ TableName: db.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, Limit: limit }));
  const sizes = (page.Items ?? []).map((item) => itemBytes(marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true })));
  if (sizes.length === 0) return undefined;
  const max = Math.max(...sizes);
  return { items: sizes.length, mean_bytes: Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length), max_bytes: max, wcu_per_write: writeUnits(max) };
}

/** `perAccount` for each process that sent requests in between. */
export function perAccountByProcess(before: TableCounts, after: TableCounts, accounts: number): Record<string, Record<string, number>> {
  return Object.fromEntries(Object.entries(after.byProcess).map(([name, c]) => [name, perAccount(before.byProcess[name] ?? {}, c, accounts)]).filter(([, c]) => Object.keys(c as object).length > 0));
}

async function firstJson<T>(child: ChildProcess, lines: Interface, what: string): Promise<T> {
  return JSON.parse(
    await new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
      lines.once('line', resolve);
    }),
  ) as T;
}

async function startTable(): Promise<TableProcess> {
  const child = spawn(process.execPath, [...cpuProfileArgs(), 'bench/fleet-table.ts'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const { endpoint, tableName } = await firstJson<{ endpoint: string; tableName: string }>(child, lines, 'the table process');
  return {
    endpoint,
    tableName,
    pid: child.pid as number,
    counts: () =>
      new Promise((resolve) => {
        lines.once('line', (l) => resolve(JSON.parse(l) as TableCounts));
        child.stdin!.write('counts\n');
      }),
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startApi(table: { endpoint: string; tableName: string }): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const child = spawn(process.execPath, [...cpuProfileArgs(), 'bench/fleet-api.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...tableProcessEnv(table), BENCH_ADMIN_TOKEN: ADMIN_TOKEN, AWS_SDK_UA_APP_ID: 'api' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { port } = await firstJson<{ port: number }>(child, createInterface({ input: child.stdout! }), 'the API process');
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid as number,
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Polls `check` every `everyMs` until it holds; the elapsed ms, or undefined past `limitMs`. */
async function timed(check: () => boolean | Promise<boolean>, limitMs: number, everyMs = 50): Promise<number | undefined> {
  const start = performance.now();
  while (!(await check())) {
    if (performance.now() - start > limitMs) return undefined;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return round(performance.now() - start);
}

export async function runFleetBench(options: FleetOptions, emit: (l: Line) => void): Promise<Line[]> {
  const lines: Line[] = [];
  const out = (l: Line) => {
    lines.push(l);
    emit(l);
  };
  // The bench's own table clients (its reads of the accounts, the test agents' world) are counted as `bench`.
  process.env.AWS_SDK_UA_APP_ID ??= 'bench';
  const dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  try {
    const table = await startTable();
    cleanups.push(() => table.close());
    const db: TableRef = {
      tableName: table.tableName,
      client: createDocumentClient({ endpoint: table.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
    };
    cleanups.push(() => db.client.destroy());

    // The full agents' cluster: the test Kubernetes API server over TLS.
    const world = new AccountsWorld();
    world.kube = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: { username: 'agent', groups: ['system:masters'] } } } });
    cleanups.push(async () => {
      await world.reset();
      await world.kube.close();
      rmSync(world.dir, { recursive: true, force: true });
    });
    const realKubeconfig = world.kubeconfig('fleet-real');

    const names = Array.from({ length: options.accounts }, (_, i) => `fleet-${String(i).padStart(5, '0')}`);
    const zoneOf = (i: number) => (i < options.realAccounts ? REAL_ZONE : `fleet_z${String((i - options.realAccounts) % options.zones).padStart(2, '0')}`);
    const zones = new Map<string, string[]>();
    names.forEach((n, i) => {
      const z = zoneOf(i);
      zones.set(z, [...(zones.get(z) ?? []), n]);
    });
    const defs = names.map((name, i) => ({ name, kubeconfigFile: i < options.realAccounts ? realKubeconfig : '/k/fleet' }));
    const configPath = join(dir, 'vendor-driver.yml');
    writeFileSync(configPath, stringify({ grpc: { host: '127.0.0.1' }, auth: { tokens: [TOKEN, AGENT_TOKEN] }, kubernetes: { accounts: defs } }));

    // Each replica's log says which agents it welcomed and which answers it recorded.
    const replicaOf = new Map<string, number>();
    const reopened = new Map<string, number>();
    const activeAt = new Map<string, number>();
    let answers = 0;
    const drivers: DriverProcess[] = [];
    for (let r = 0; r < 3; r++) {
      const driver = await startDriverProcess(table, configPath, { AWS_SDK_UA_APP_ID: `driver_${r}` });
      driver.onRecord((rec) => {
        if (rec['msg'] === 'agent session opened') {
          replicaOf.set(String(rec['agentId']), r);
          reopened.set(String(rec['agentId']), r);
        }
        if (rec['msg'] === 'assignment result' && rec['ok'] === true && rec['outcome'] === 'recorded') {
          answers++;
          const account = String(rec['account']);
          if (!activeAt.has(account)) activeAt.set(account, performance.now());
        }
      });
      drivers.push(driver);
      cleanups.push(() => (alive.has(r) ? driver.close() : undefined));
    }
    const alive = new Set([0, 1, 2]);
    const balancer = await startTcpBalancer(drivers.map((d) => d.port));
    cleanups.push(() => balancer.close());
    const api = await startApi(table);
    cleanups.push(() => api.close());
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };

    // The agents.
    const target = `127.0.0.1:${balancer.port}`;
    const protocolAgents = new Map<string, ProtocolAgent>();
    const members = new Map<string, string[]>();
    const addAgent = (zone: string, id: string) => {
      const a = new ProtocolAgent({ target, agentId: id, zone, token: TOKEN });
      protocolAgents.set(id, a);
      members.set(zone, [...(members.get(zone) ?? []), id]);
      return a;
    };
    cleanups.push(() => protocolAgents.forEach((a) => a.stop()));
    for (const zone of zones.keys()) {
      if (zone === REAL_ZONE) continue;
      for (let k = 0; k < options.agentsPerZone; k++) addAgent(zone, `${zone}-a${k}`);
    }
    const realAgents: TestAgent[] = [];
    for (let k = 0; k < options.realAgents; k++) realAgents.push(await world.agent(`fleet-real-${k}`, { target, reconnectTimeoutMs: 1000 }));
    if (options.realAgents > 0) members.set(REAL_ZONE, realAgents.map((a) => a.id));
    const agentCount = protocolAgents.size + realAgents.length;
    const welcomed = await timed(() => replicaOf.size >= agentCount, 60_000);
    if (welcomed === undefined) throw new Error(`only ${replicaOf.size} of ${agentCount} agents were welcomed`);

    /** What the agent's current stream was told of the account. */
    const told = (agentId: string, account: string): { caching: boolean; cachingEpoch: number } | undefined => {
      const p = protocolAgents.get(agentId);
      if (p !== undefined) return p.connected ? p.held(account) : undefined;
      const view = realAgents.find((a) => a.id === agentId)?.holder().view(account);
      return view === undefined ? undefined : { caching: view.caching, cachingEpoch: view.cachingEpoch };
    };
    const readAll = async (list: readonly string[]): Promise<AccountRecord[]> => {
      const found: AccountRecord[] = [];
      for (let i = 0; i < list.length; i += 100) {
        const got = await getAccounts(db, list.slice(i, i + 100), { consistent: true });
        for (const n of list.slice(i, i + 100)) {
          const r = got.get(n);
          if (r !== undefined) found.push(r);
        }
      }
      return found;
    };
    const spreads = async (): Promise<ZoneSpread[]> => {
      const records = new Map((await readAll(names)).map((r) => [r.name, r] as const));
      return [...zones].map(([zone, list]) => zoneSpread(zone, list.map((n) => records.get(n)?.cachingAgentId), members.get(zone) ?? []));
    };
    const processes = () => {
      const mib = (b: number) => round(b / 1_048_576, 1);
      const stats: Record<string, { rss_mib: number; cpu_ms: number }> = {};
      drivers.forEach((d, r) => {
        if (!alive.has(r)) return;
        const s = procStats(d.pid);
        stats[`driver_${r}`] = { rss_mib: mib(s.rssBytes), cpu_ms: s.cpuTicks * 10 };
      });
      for (const [name, pid] of [['api', api.pid], ['table', table.pid]] as const) {
        const s = procStats(pid);
        stats[name] = { rss_mib: mib(s.rssBytes), cpu_ms: s.cpuTicks * 10 };
      }
      stats['bench_agents'] = { rss_mib: mib(process.memoryUsage().rss), cpu_ms: round(ownCpuMs()) };
      return stats;
    };

    // Phase 1: registration (not timed), then activation in PATCH batches.
    for (let i = 0; i < names.length; i += MAX_BATCH) {
      const res = await call('POST', '/vendor/accounts', names.slice(i, i + MAX_BATCH).map((name, j) => ({ name, zoneId: zoneOf(i + j) })));
      if (res.status !== 200) throw new Error(`POST: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
    }
    const handOuts = [...zones].reduce((sum, [zone, list]) => sum + list.length * (members.get(zone)?.length ?? 0), 0);
    // What each process spends while nothing is being activated (polls, sweeps, heartbeats): the part of
    // the CPU figures below that grows with the phase's length, not with its accounts.
    const idleFrom = processes();
    const idleStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const idleTo = processes();
    const idleCpuPerSecond = Object.fromEntries(Object.entries(idleTo).map(([k, v]) => [k, round((v.cpu_ms - (idleFrom[k]?.cpu_ms ?? 0)) / idleSeconds)]));
    const load = loadAverage();
    const countsBefore = await table.counts();
    const cpuBefore = processes();
    const started = performance.now();
    const startedAtMs = Date.now();
    // One batch after another, as an operator's script would send them; a batch the API answers 503
    // (the table not answering in time) is sent again, and a 409 then says its accounts were
    // activated by the attempt that timed out.
    const statuses: number[] = [];
    let retries = 0;
    for (let i = 0; i < names.length; i += MAX_BATCH) {
      const batch = names.slice(i, i + MAX_BATCH).map((name) => ({ name, state: 'ACTIVE' }));
      let res = await call('PATCH', '/vendor/accounts', batch);
      let retried = false;
      for (let attempt = 0; res.status === 503 && attempt < 5; attempt++, retries++) {
        retried = true;
        res = await call('PATCH', '/vendor/accounts', batch);
      }
      if (res.status !== 200 && !(retried && res.status === 409)) throw new Error(`PATCH: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
      statuses.push(res.status);
    }
    const patchMs = round(performance.now() - started);
    const allActive = await timed(() => activeAt.size >= names.length, options.phaseLimitMs);
    // What the activation itself cost, before the wait for the last confirmations adds the time-driven
    // requests (heartbeats, sweeps, polls) of however long that wait is.
    const activeAtMs = Date.now();
    const countsActive = await table.counts();
    const cpuActive = processes();
    const allAgents = await timed(() => answers >= handOuts, options.phaseLimitMs);
    const activeMs = allActive === undefined ? undefined : round(patchMs + allActive);
    const countsAfter = await table.counts();
    const cpuAfter = processes();
    // Where the writes landed until all were ACTIVE, and what one write of each partition's items costs.
    let writesByPartition: Record<string, unknown> | undefined;
    if (countsActive.writesPerSecond !== undefined) {
      const writes = partitionWrites(countsActive.writesPerSecond, startedAtMs, activeAtMs);
      const firstAgent = [...protocolAgents.keys()][0];
      // The account items and the feed: the partitions of the first account's shard.
      const samples: Record<string, string | undefined> = { [PK_PREFIX.account]: accountKey(names[0] as string).pk, [PK_PREFIX.change]: changeKey(0, names[0] as string, 0).pk, SESSION: PK.session, [PK_PREFIX.held]: firstAgent === undefined ? undefined : `${PK_PREFIX.held}${firstAgent}` };
      writesByPartition = {};
      for (const [word, row] of Object.entries(writes)) {
        const pk = samples[word];
        const items = pk === undefined ? undefined : await partitionItemBytes(db, pk);
        writesByPartition[word] = { ...row, ...(items === undefined ? {} : { item: items, busiest_partition_peak_wcu_per_second: row.busiest_partition_peak_per_second * items.wcu_per_write }) };
      }
    }
    out({
      bench: 'fleet',
      figure: 'activate',
      accounts: names.length,
      agents: `${protocolAgents.size} protocol clients in ${options.zones} zones of ${options.agentsPerZone}, ${realAgents.length} full agents in zone ${REAL_ZONE} (${options.realAccounts} accounts)`,
      replicas: 3,
      patch_requests: statuses.length,
      patch_retries_after_503: retries,
      patch_ms: patchMs,
      all_active_ms: activeMs ?? null,
      every_agent_confirmed_ms: allAgents === undefined || allActive === undefined ? null : round(patchMs + allActive + allAgents),
      hand_outs: handOuts,
      answers_recorded: answers,
      target_ms: TARGET_MS,
      within_target: activeMs !== undefined && activeMs <= TARGET_MS,
      table_requests_per_account: perAccount(countsBefore.counts, countsAfter.counts, names.length),
      // Since the first PATCH: when half, nine tenths, 99 in 100 and all of the accounts were ACTIVE.
      active_ms: activePercentiles([...activeAt.values()].map((t) => t - started), names.length),
      until_all_active: {
        table_requests_per_account: perAccount(countsBefore.counts, countsActive.counts, names.length),
        // The same by the process that sent them: the bench's own reads are `bench`.
        table_requests_per_account_by_process: perAccountByProcess(countsBefore, countsActive, names.length),
        cpu_ms: Object.fromEntries(Object.entries(cpuActive).map(([k, v]) => [k, round(v.cpu_ms - (cpuBefore[k]?.cpu_ms ?? 0))])),
        // Less what the process spends idle over as long (`idle_cpu_ms_per_s`), per account: the activation's own CPU.
        cpu_ms_per_account_less_idle: Object.fromEntries(
          Object.entries(cpuActive).map(([k, v]) => [k, round((v.cpu_ms - (cpuBefore[k]?.cpu_ms ?? 0) - (idleCpuPerSecond[k] ?? 0) * ((activeAtMs - startedAtMs) / 1000)) / names.length, 3)]),
        ),
      },
      idle_cpu_ms_per_s: idleCpuPerSecond,
      processes: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, { rss_mib: v.rss_mib, cpu_ms: round(v.cpu_ms - (cpuBefore[k]?.cpu_ms ?? 0)) }])),
      ...(writesByPartition === undefined ? {} : { table_writes_by_partition_until_all_active: writesByPartition }),
      load_average_1m: load,
    });

    // The caching roles once settled.
    let settled: ZoneSpread[] = [];
    const evenMs = await timed(async () => (settled = await spreads()).every((s) => s.even), options.phaseLimitMs, 1000);
    const describe = (list: ZoneSpread[]) => ({
      zones_even: list.filter((s) => s.even).length,
      zones: list.length,
      roles_min: Math.min(...list.map((s) => s.min)),
      roles_max: Math.max(...list.map((s) => s.max)),
      uneven: list.filter((s) => !s.even).slice(0, 5),
    });
    out({ bench: 'fleet', figure: 'spread_after_activation', settled_ms: evenMs ?? null, ...describe(settled) });

    // Phase 2: operations queued, then one replica killed.
    const victim = 0;
    const opIds: string[] = [];
    const opAccounts = names.filter((_, i) => i >= options.realAccounts).filter((_, i) => i % Math.max(1, Math.floor((names.length - options.realAccounts) / options.operations)) === 0).slice(0, options.operations);
    for (const account of opAccounts) {
      const res = await call('POST', `/vendor/accounts/${account}/operations`, { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'web', name: 'web' }], replicas: 2 }, { 'Idempotency-Key': `fleet-${account}` });
      if (res.status !== 202 && res.status !== 200) throw new Error(`operation: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
      opIds.push(String(res.json['id']));
    }
    const beforeKill = new Map((await readAll(names)).map((r) => [r.name, r] as const));
    const affectedAgents = [...replicaOf].filter(([, r]) => r === victim).map(([id]) => id);
    const affectedAccounts = names.filter((n) => affectedAgents.includes(beforeKill.get(n)?.cachingAgentId ?? ''));
    for (const id of affectedAgents) reopened.delete(id);
    const killedAt = performance.now();
    process.kill(drivers[victim]!.pid, 'SIGKILL');
    alive.delete(victim);
    balancer.backends = drivers.filter((_, r) => alive.has(r)).map((d) => d.port);
    const sinceKill = (ms: number | undefined) => (ms === undefined ? undefined : round(performance.now() - killedAt));
    const sessionsMs = sinceKill(await timed(() => affectedAgents.every((id) => reopened.has(id) && reopened.get(id) !== victim), options.phaseLimitMs));
    let uncached = affectedAccounts.length;
    const cachedMs = sinceKill(await timed(
      async () => {
        const records = await readAll(affectedAccounts);
        uncached = records.filter((r) => {
          const holder = r.cachingAgentId;
          const view = holder === undefined ? undefined : told(holder, r.name);
          return view?.caching !== true || view.cachingEpoch !== r.cachingEpoch;
        }).length + (affectedAccounts.length - records.length);
        return uncached === 0;
      },
      options.phaseLimitMs,
      250,
    ));
    let unfinished = opIds.length;
    const opsMs = await timed(
      async () => {
        let left = 0;
        for (const id of opIds) {
          const op = await call('GET', `/vendor/operations/${id}`);
          if (op.json['state'] !== 'SUCCEEDED') left++;
        }
        unfinished = left;
        return left === 0;
      },
      60_000,
      500,
    );
    const afterKill = await readAll(names);
    const lostAccounts = names.length - afterKill.filter((r) => r.state === 'ACTIVE' && r.cachingAgentId !== undefined).length;
    out({
      bench: 'fleet',
      figure: 'replica_killed',
      sessions_moved: affectedAgents.length,
      accounts_whose_caching_agent_moved: affectedAccounts.length,
      sessions_reestablished_ms: sessionsMs ?? null,
      caching_again_ms: cachedMs ?? null,
      still_uncached: uncached,
      target_ms: TARGET_MS,
      within_target: sessionsMs !== undefined && cachedMs !== undefined && sessionsMs <= TARGET_MS && cachedMs <= TARGET_MS,
      accounts_lost: lostAccounts,
      operations_queued: opIds.length,
      operations_unfinished: unfinished,
      operations_finished_ms: opsMs ?? null,
      processes: processes(),
    });

    // Phase 3: an agent joins a zone, then one leaves it.
    const zone = [...zones.keys()].find((z) => z !== REAL_ZONE) as string;
    const zoneNames = zones.get(zone) as string[];
    const zoneState = async () => {
      const records = await readAll(zoneNames);
      const spread = zoneSpread(zone, records.map((r) => r.cachingAgentId), members.get(zone) ?? []);
      return { records, spread, epochs: records.reduce((s, r) => s + (r.cachingEpoch ?? 0), 0) };
    };
    const roleCountsOf = (records: AccountRecord[], agents: readonly string[]) => agents.map((a) => records.filter((r) => r.cachingAgentId === a).length);
    const before = await zoneState();
    const joiner = addAgent(zone, `${zone}-joined`);
    const fewestJoin = fewestMovesToEven([...roleCountsOf(before.records, members.get(zone) ?? [])]);
    let joined = before;
    const joinMs = await timed(async () => (joined = await zoneState()).spread.even, options.phaseLimitMs, 250);
    out({
      bench: 'fleet',
      figure: 'agent_joined',
      zone,
      accounts: zoneNames.length,
      agents_before: before.spread.agents,
      roles_before: { min: before.spread.min, max: before.spread.max },
      roles_after: { min: joined.spread.min, max: joined.spread.max },
      joiner_roles: joined.records.filter((r) => r.cachingAgentId === joiner.id).length,
      even_ms: joinMs ?? null,
      roles_moved: joined.epochs - before.epochs,
      fewest_moves: fewestJoin,
    });

    const leaver = (members.get(zone) ?? [])[0] as string;
    protocolAgents.get(leaver)?.stop();
    members.set(zone, (members.get(zone) ?? []).filter((a) => a !== leaver));
    const leftFrom = joined;
    const leaverRoles = leftFrom.records.filter((r) => r.cachingAgentId === leaver).length;
    let left = leftFrom;
    const leaveMs = await timed(async () => (left = await zoneState()).spread.even, options.phaseLimitMs, 250);
    out({
      bench: 'fleet',
      figure: 'agent_left',
      zone,
      agents_after: left.spread.agents,
      leaver_roles: leaverRoles,
      roles_after: { min: left.spread.min, max: left.spread.max },
      even_ms: leaveMs ?? null,
      roles_moved: left.epochs - leftFrom.epochs,
      fewest_moves: leaverRoles,
      bound_ms: 'handoverGraceMs + sweepIntervalMs = 12000, plus the settles',
    });
    return lines;
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        // a process already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
