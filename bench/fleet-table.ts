/**
 * `bench:fleet`'s table: the embedded table (dynalite) in a process of its own, which counts every
 * request by DynamoDB operation (the `X-Amz-Target` header), whichever process sends it: the driver
 * replicas and the API run in processes of their own, so their reads and writes can only be counted
 * where they arrive. They are counted in this process, from Node's HTTP server diagnostics channels
 * (`http.server.request.start`, `http.server.response.finish`), as dynalite's own server takes them:
 * no proxy in between, whose HTTP parsing and forwarding would be charged to the table's CPU while
 * DynamoDB has none of it. Prints one JSON line with the table's endpoint and name; each `counts` line
 * on stdin is answered with one JSON line of the counts so far.
 * Requests the table refuses (status 400: a failed condition, mostly, a lost race between writers) are
 * counted a second time as `<operation> refused`, so the races a step costs show. The bench names each
 * process's SDK client (`AWS_SDK_UA_APP_ID`, sent as `app/<name>` in its user agent), so the same
 * counts are kept by process too (`byProcess`; `other` for a client not named). With
 * `BENCH_TABLE_KINDS=1` each request's body is also read and counted, by process, by what it is
 * about (`requestKind`): a Query or UpdateItem by the partition of its key, a BatchWriteItem by the
 * partitions it writes, a BatchGetItem by how many keys it reads; this costs the table process CPU.
 * With `BENCH_TABLE_LOG=<file>` it also appends the first `BENCH_TABLE_LOG_PER_KIND` (20) request
 * bodies of each kind and process to that file, one JSON line each, with the answer's size: the
 * shapes `bench/table-cost.ts` replays. With `BENCH_TABLE_PARTITIONS=1` it reads each write's body and
 * counts the items written per partition key per second (bench/fleet-partitions.ts), sent with the
 * counts as `writesPerSecond`; this too costs the table process CPU.
 */
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { startEmbeddedTable } from '../shared/table/core/embedded.ts';
import { systemClock } from '../shared/clock.ts';
import { requestKind } from './fleet-request-kind.ts';
import { countWrites, writtenPartitions, type WritesPerSecond } from './fleet-partitions.ts';

const table = await startEmbeddedTable({ tcp: true, ttlSweep: { clock: systemClock } });
const counts: Record<string, number> = {};
const byProcess: Record<string, Record<string, number>> = {};
const kinds = process.env.BENCH_TABLE_KINDS === '1';
const logFile = process.env.BENCH_TABLE_LOG;
const logPerKind = Number(process.env.BENCH_TABLE_LOG_PER_KIND ?? 20);
const logged: Record<string, number> = {};
const partitions = process.env.BENCH_TABLE_PARTITIONS === '1';
const writesPerSecond: WritesPerSecond = {};

/** `alone`: counted by process only (a request's kind, counted beside its operation). */
function count(processName: string, key: string, alone = false): void {
  if (!alone) counts[key] = (counts[key] ?? 0) + 1;
  const mine = (byProcess[processName] ??= {});
  mine[key] = (mine[key] ?? 0) + 1;
}

/** Appends a sample of the request bodies, a few of each kind and process (`BENCH_TABLE_LOG`). */
function logSample(file: string, sender: string, operation: string, body: string, answerBytes: number, status: number): void {
  const kind = `${sender} ${requestKind(operation, body) ?? operation}`;
  const n = (logged[kind] = (logged[kind] ?? 0) + 1);
  if (n > logPerKind) return;
  appendFileSync(file, `${JSON.stringify({ sender, operation, kind, status, requestBytes: Buffer.byteLength(body), answerBytes, body: JSON.parse(body) as unknown })}\n`);
}

interface Seen {
  operation: string;
  sender: string;
  body: Buffer[];
}
const seen = new WeakMap<IncomingMessage, Seen>();

subscribe('http.server.request.start', (message) => {
  const { request } = message as { request: IncomingMessage };
  const target = String(request.headers['x-amz-target'] ?? '');
  const operation = target.slice(target.indexOf('.') + 1) || 'other';
  const sender = /(?:^| )app\/(\S+)/.exec(String(request.headers['user-agent'] ?? ''))?.[1] ?? 'other';
  count(sender, operation);
  if (!kinds && !partitions && logFile === undefined) {
    seen.set(request, { operation, sender, body: [] });
    return;
  }
  // Beside dynalite's own listeners, which it removes once it answers: the body has been read by then.
  const body: Buffer[] = [];
  seen.set(request, { operation, sender, body });
  request.on('data', (c: Buffer) => body.push(c));
  if (kinds || partitions) {
    request.on('end', () => {
      const text = Buffer.concat(body).toString();
      const kind = kinds ? requestKind(operation, text) : undefined;
      if (kind !== undefined) count(sender, kind, true);
      if (partitions) countWrites(writesPerSecond, Date.now(), writtenPartitions(operation, text));
    });
  }
});

subscribe('http.server.response.finish', (message) => {
  const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
  const asked = seen.get(request);
  if (asked === undefined) return;
  if (response.statusCode === 400) count(asked.sender, `${asked.operation} refused`);
  if (logFile !== undefined) {
    logSample(logFile, asked.sender, asked.operation, Buffer.concat(asked.body).toString(), Number(response.getHeader('content-length') ?? 0), response.statusCode);
  }
});

process.stdout.write(`${JSON.stringify({ endpoint: table.endpoint, tableName: table.tableName })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'counts') process.stdout.write(`${JSON.stringify({ counts, byProcess, ...(partitions ? { writesPerSecond } : {}) })}\n`);
});
const stop = (): void => void table.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
