/**
 * `bench:fleet`'s table: the embedded table (dynalite) in a process of its own, behind a loopback
 * HTTP proxy that counts every request by DynamoDB operation (the `X-Amz-Target` header), whichever
 * process sends it: the driver replicas and the API run in processes of their own, so their reads
 * and writes can only be counted where they arrive. Prints one JSON line with the proxy's endpoint
 * and the table name; each `counts` line on stdin is answered with one JSON line of the counts so far.
 * Requests the table refuses (status 400: a failed condition, mostly, a lost race between writers) are
 * counted a second time as `<operation> refused`, so the races a step costs show. The bench names each
 * process's SDK client (`AWS_SDK_UA_APP_ID`, sent as `app/<name>` in its user agent), so the same
 * counts are kept by process too (`byProcess`; `other` for a client not named). With
 * `BENCH_TABLE_KINDS=1` the proxy also reads each request's body and counts, by process, what it is
 * about (`requestKind`): a Query or UpdateItem by the partition of its key, a BatchWriteItem by the
 * partitions it writes, a BatchGetItem by how many keys it reads; this costs the table process CPU.
 */
import { Agent, createServer, request } from 'node:http';
import { createInterface } from 'node:readline';
import { startEmbeddedTable } from '../shared/table/core/embedded.ts';
import { systemClock } from '../shared/clock.ts';
import { requestKind } from './fleet-request-kind.ts';

const table = await startEmbeddedTable({ tcp: true, ttlSweep: { clock: systemClock } });
const upstream = new URL(table.endpoint);
const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });
const counts: Record<string, number> = {};
const byProcess: Record<string, Record<string, number>> = {};

/** `alone`: counted by process only (a request's kind, counted beside its operation). */
function count(processName: string, key: string, alone = false): void {
  if (!alone) counts[key] = (counts[key] ?? 0) + 1;
  const mine = (byProcess[processName] ??= {});
  mine[key] = (mine[key] ?? 0) + 1;
}

const proxy = createServer((req, res) => {
  const target = String(req.headers['x-amz-target'] ?? '');
  const operation = target.slice(target.indexOf('.') + 1) || 'other';
  const agent = String(req.headers['user-agent'] ?? '');
  const sender = /(?:^| )app\/(\S+)/.exec(agent)?.[1] ?? 'other';
  count(sender, operation);
  if (process.env.BENCH_TABLE_KINDS === '1') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const kind = requestKind(operation, Buffer.concat(chunks).toString());
      if (kind !== undefined) count(sender, kind, true);
    });
  }
  const forward = request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: keepAlive },
    (answer) => {
      if (answer.statusCode === 400) count(sender, `${operation} refused`);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on('error', () => res.destroy());
  req.pipe(forward);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const port = (proxy.address() as { port: number }).port;
process.stdout.write(`${JSON.stringify({ endpoint: `http://127.0.0.1:${port}`, tableName: table.tableName })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'counts') process.stdout.write(`${JSON.stringify({ counts, byProcess })}\n`);
});
const stop = (): void => void table.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
