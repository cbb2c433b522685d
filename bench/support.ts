/** Small pieces the benchmarks share: timing the driver's own log records, waiting, reading /proc. */
import { spawn } from 'node:child_process';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { Logger } from '../shared/log.ts';
import type { CapacityMeter } from '../shared/table/core/capacity.ts';
import { createDocumentClient, type TableRef } from '../shared/table/core/client.ts';
import { startEmbeddedTable } from '../shared/table/core/embedded.ts';
import { tableProcessEnv } from '../test/support/table-env.ts';

export type Line = Record<string, unknown>;

/** A logger that hands each record to `on` as it is written, to time the driver's own events. */
export function eventLogger(on: (record: Record<string, unknown>) => void): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') on(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return pino({ level: 'info', base: {} }, sink);
}

export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface ProcStats {
  rssBytes: number;
  cpuTicks: number;
}

/** Resident memory and CPU ticks (user + system) of a process, from /proc. */
export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssBytes: rssKb * 1024, cpuTicks: Number(fields[11]) + Number(fields[12]) };
}

/** The machine's 1-minute load average, for the record of a run. */
/** CPU time (user + system, ms) this process has used so far. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

/** A table reached over loopback: in this process (dynalite here) or in a process of its own (bench/table-process.ts). */
export interface BenchTable {
  tableName: string;
  endpoint: string;
  /** A client of its own, counting its round trips and capacity in `meter` when given. */
  client(meter?: CapacityMeter): TableRef;
  /** CPU time (ms) the table has used so far, when it runs in a process of its own. */
  cpuMs(): number | undefined;
  /** The table's process, when it runs in one of its own. */
  pid?: number | undefined;
  /** The table process's memory after a full collection; undefined when the table runs inline. */
  memory?(): Promise<TableMemory>;
  close(): Promise<void>;
}

export interface TableMemory {
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  /** dynalite's store iterators open at that moment (docs/table.md#memory-of-the-embedded-table). */
  openIterators: number;
}

export type TablePlacement = 'process' | 'inline';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LOCAL = { region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

export async function startBenchTable(placement: TablePlacement): Promise<BenchTable> {
  const clients: TableRef[] = [];
  const client = (tableName: string, endpoint: string) => (meter?: CapacityMeter): TableRef => {
    const ref = { tableName, client: createDocumentClient({ endpoint, ...LOCAL, ...(meter === undefined ? {} : { meter }) }) };
    clients.push(ref);
    return ref;
  };
  const closeClients = () => clients.forEach((c) => c.client.destroy());
  if (placement === 'inline') {
    // Driver processes of their own share it: over loopback TCP.
    const table = await startEmbeddedTable({ tcp: true });
    return {
      tableName: table.tableName,
      endpoint: table.endpoint,
      client: client(table.tableName, table.endpoint),
      cpuMs: () => undefined,
      close: async () => {
        closeClients();
        await table.close();
      },
    };
  }
  const child = spawn(process.execPath, [...cpuProfileArgs(), '--expose-gc', 'bench/table-process.ts'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the table process exited with ${code}`)));
    lines.once('line', resolve);
  });
  const { endpoint, tableName } = JSON.parse(first) as { endpoint: string; tableName: string };
  return {
    tableName,
    endpoint,
    client: client(tableName, endpoint),
    cpuMs: () => procStats(child.pid as number).cpuTicks * 10,
    pid: child.pid,
    memory: () =>
      new Promise<TableMemory>((resolve) => {
        const onLine = (line: string) => {
          const parsed = JSON.parse(line) as { memory?: TableMemory };
          if (parsed.memory === undefined) return;
          lines.off('line', onLine);
          resolve(parsed.memory);
        };
        lines.on('line', onLine);
        child.kill('SIGUSR2');
      }),
    close: async () => {
      closeClients();
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** BENCH_CPU_PROF=DIR: the processes a bench spawns write a V8 CPU profile into DIR when they exit (`node --cpu-prof`). */
export function cpuProfileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir === undefined || dir === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** `driver/main.ts` in a process of its own, as it is deployed, on a table reached at `table.endpoint`. */
export interface DriverProcess {
  port: number;
  pid: number;
  /** Every JSON log line the driver writes, as it writes it. */
  onRecord(listener: (record: Record<string, unknown>) => void): void;
  close(): Promise<void>;
}

export async function startDriverProcess(table: { tableName: string; endpoint: string }, configPath: string, env: Record<string, string> = {}): Promise<DriverProcess> {
  const child = spawn(process.execPath, [...cpuProfileArgs(), 'driver/main.ts', '--config', configPath], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      ...tableProcessEnv(table),
      VENDOR_LOG_FORMAT: 'json',
      GRPC_PORT: '0',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listeners: ((record: Record<string, unknown>) => void)[] = [];
  // The driver's last warning or error before it listens: why it exited, when it does.
  let lastProblem = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`driver exited with ${code}${lastProblem === '' ? '' : `: ${lastProblem}`}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const record = JSON.parse(line) as Record<string, unknown>;
      if (['warn', 'error', 'fatal'].includes(String(record['level']))) lastProblem = line.slice(0, 2000);
      if (record['msg'] === 'driver listening') resolve(record['port'] as number);
      for (const l of listeners) l(record);
      // BENCH_DRIVER_WARNINGS=1: the driver's warnings and errors on stderr, to see why a figure is slow.
      if (process.env.BENCH_DRIVER_WARNINGS !== undefined && ['warn', 'error'].includes(String(record['level']))) process.stderr.write(`${line.slice(0, 400)}\n`);
    });
  });
  return {
    port,
    pid: child.pid as number,
    onRecord: (l) => void listeners.push(l),
    close: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const keepAlive = new HttpAgent({ keepAlive: true, maxSockets: 256 });

export interface JsonResponse {
  status: number;
  json: Record<string, unknown>;
}

/** One JSON request over a keep-alive connection with a bearer token. */
export function jsonRequest(url: string, token: string, method: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        agent: keepAlive,
        headers: { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(payload.length) }), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The vendor-agent.yml of a bench agent: one driver, the bench's kubeconfigs allowed, warnings to a file in `dir`. */
export function benchAgentConfig(driverPort: number, token: string, dir: string, i: number): Record<string, unknown> {
  return {
    driver: { grpc: `127.0.0.1:${driverPort}`, insecure: true, auth: { token } },
    kubernetes: { retries: { enabled: false }, assignedAccounts: { kubeconfigDirs: [dir] } },
    server: { host: '127.0.0.1', port: 0 },
    logging: { level: 'warn', file: `${dir}/agent-${i}.log` },
  };
}
