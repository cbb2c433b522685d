/**
 * The agent's CPU per watch event in its decoding step, apart from the rest of `bench:cache`: the
 * test API server (in this process) is seeded with the benchmark's objects and sends a burst of pod
 * updates to a watch; its lines are kept, then decoded here again and again with the agent's own
 * functions (agent/resources/decode.ts), each step timed by the CPU this process uses:
 *
 * - `json_parse_cpu_per_event`: `JSON.parse` of each line, the floor of any decoding;
 * - `compact_cpu_per_event`: the compact form of each parsed object;
 * - `decode_cpu_per_event`: the whole step the agent runs per batch (lines, parse, compact);
 * - `handoff_cpu_per_event`: passing the decoded batch from a decoding thread to the main thread
 *   (the structured clone both sides make: serialize and deserialize).
 *
 * The steps alternate within each round and medians of the rounds are reported, so the ratio of a
 * step to the parse (`ratio_to_parse`) holds at any load, where the microseconds do not.
 *
 *   node bench/cache-decode.ts    # BENCH_OBJECTS (2000), BENCH_EVENTS (2000), BENCH_ROUNDS (15)
 */
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { deserialize, serialize } from 'node:v8';
import { compactObject } from '../agent/resources/compact.ts';
import { decodeBatch } from '../agent/resources/decode.ts';
import { churn, seedCluster, startTestApiServer } from '../test/kube/index.ts';

const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 2000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 15));
const POD = { kind: 'Pod', group: '', apiVersion: 'v1' };

function emit(figure: string, fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ bench: 'cache-decode', figure, ...fields })}\n`);
}

/** The watch lines of a burst of `EVENTS` pod updates, as the API server sent them. */
async function burstLines(): Promise<Buffer> {
  const server = await startTestApiServer({ maxRevisions: 100_000, bookmarkIntervalMs: 0 });
  try {
    await seedCluster(server.store, { objects: OBJECTS, namespaces: 10 });
    return await new Promise<Buffer>((resolve, reject) => {
      const req = request(`${server.url}/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`, (res) => {
        const chunks: Buffer[] = [];
        let lines = 0;
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
          if (lines >= EVENTS) {
            res.destroy();
            const all = Buffer.concat(chunks);
            let end = -1;
            for (let n = 0; n < EVENTS; n++) end = all.indexOf(10, end + 1);
            resolve(all.subarray(0, end + 1));
          }
        });
        res.on('error', reject);
        // The watch is open: the burst goes to it.
        void churn(server.store, { count: EVENTS }).catch(reject);
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    await server.close();
  }
}

const batch = await burstLines();
const lines = batch.toString('utf8').split('\n').filter((l) => l !== '');
const parsed = lines.map((l) => (JSON.parse(l) as { object: unknown }).object);
const decoded = decodeBatch(batch, POD);
const wire = serialize(decoded);

/** CPU of one pass of `step` over the burst, in µs per event. */
function cpuPerEvent(step: () => void): number {
  const before = process.cpuUsage();
  step();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / lines.length;
}

const steps: Record<string, () => void> = {
  json_parse_cpu_per_event: () => {
    for (const l of lines) JSON.parse(l);
  },
  compact_cpu_per_event: () => {
    for (const o of parsed) compactObject(o, POD.kind, POD.group, POD.apiVersion);
  },
  decode_cpu_per_event: () => void decodeBatch(batch, POD),
  handoff_cpu_per_event: () => void deserialize(serialize(decoded)),
};
// One pass of each first, so what is timed runs optimized.
for (const step of Object.values(steps)) step();
const samples = new Map<string, number[]>(Object.keys(steps).map((k) => [k, []]));
const load = loadavg()[0]!;
for (let r = 0; r < ROUNDS; r++) for (const [name, step] of Object.entries(steps)) samples.get(name)!.push(cpuPerEvent(step));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const parse = median(samples.get('json_parse_cpu_per_event')!);
emit('burst', { value: lines.length, unit: 'events', bytes_per_event: Math.round(batch.length / lines.length), compact_bytes_per_event: Math.round(decoded.reduce((n, d) => n + (d.compact?.length ?? 0), 0) / decoded.length), handoff_bytes_per_event: Math.round(wire.length / lines.length) });
for (const name of Object.keys(steps)) {
  const value = median(samples.get(name)!);
  emit(name, { value: Math.round(value * 10) / 10, unit: 'µs CPU per event', ratio_to_parse: Math.round((value / parse) * 100) / 100, rounds: ROUNDS, load_average_1m: Math.round(load * 10) / 10 });
}
process.exit(0);
