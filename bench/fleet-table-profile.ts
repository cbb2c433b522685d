/**
 * Where the table process's CPU goes inside dynalite: reads the V8 CPU profile the table process of
 * `bench:fleet` (or `bench:table-cost`) wrote with `BENCH_CPU_PROF=DIR` and prints its busy time by
 * part: expression parsing, validation, expression evaluation, capacity and size computation, key
 * hashing, the request id, the answer's encoding and crc32, the level store, Node's HTTP server and
 * sockets, garbage collection (docs/benchmarks.md#the-tables-cpu-per-account).
 *
 *   BENCH_CPU_PROF=/tmp/prof npm run bench:fleet && node bench/fleet-table-profile.ts /tmp/prof
 *
 * Each sample is charged to the innermost frame on its stack that one of the parts claims (frames of
 * Node's buffers, of the engine and of other packages are passed over to their caller), so the parts
 * are self time and add up to the process's busy time.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const DB_FUNCTIONS: [RegExp, string][] = [
  [/^(valSize|itemSize|valSizeWithStorage|addConsumedCapacity|capacityUnits|itemKeySize)/, 'sizes and consumed capacity'],
  [/^(hashPrefix|createKey|createIndexKey|toRangeStr|toLexiNum|numToBuffer|traverseKey|validateKey)/, 'key encoding and hashing'],
  [/^(checkConditional|matchesExprFilter|matchesFilter|mapPath|resolveValue|valueEquals|compare|mapPaths)/, 'expression evaluation'],
];

/** The part a frame belongs to, or undefined when it leaves the choice to its caller. */
export function partOf(frame: CallFrame): string | undefined {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)') return 'engine (program)';
  if (/dynalite\/db\/(condition|update|projection)Parser\.js/.test(url)) return 'expression parsing';
  if (/dynalite\/validations\//.test(url)) return 'request validation';
  if (/buffer-crc32/.test(url)) return "the answer's crc32";
  if (/dynalite\/index\.js/.test(url)) {
    if (functionName === 'rand52CharId') return 'request id (randomBytes)';
    if (functionName === 'sendData') return "the answer's JSON encoding";
    return 'request handling and JSON parsing';
  }
  if (/dynalite\/actions\/updateItem\.js/.test(url)) return 'update expression applied (deep copy of the item)';
  if (/dynalite\/actions\//.test(url)) return 'other actions';
  if (/dynalite\/db\/index\.js/.test(url)) {
    for (const [re, part] of DB_FUNCTIONS) if (re.test(functionName)) return part;
    return 'other db (item read and write, streams)';
  }
  if (/dynalite\/db\/lifecycle\.js/.test(url)) return 'other db (item read and write, streams)';
  if (/(memory-level|abstract-level|classic-level|level-transcoder|level-supports|functional-red-black-tree|module-error|maybe-combine-errors|dynalite-store\.ts)/.test(url)) return 'level store';
  if (/node:_http_(server|outgoing|common|incoming)|node:net|node:internal\/stream_base_commons|node:internal\/streams|node:stream/.test(url)) return 'Node HTTP server and sockets';
  if (/fleet-table\.ts|fleet-request-kind\.ts/.test(url)) return 'bench counting';
  if (/ttl-sweep\.ts/.test(url)) return 'expiry sweep';
  return undefined;
}

export function tableProfile(profile: CpuProfile): { busyMs: number; parts: [string, number][] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const parts = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    if (byId.get(id)?.callFrame.functionName === '(idle)') return;
    busy += dt;
    let part: string | undefined;
    for (let cur: number | undefined = id; cur !== undefined && part === undefined; cur = parent.get(cur)) part = partOf((byId.get(cur) as ProfileNode).callFrame);
    const key = part ?? 'other';
    parts.set(key, (parts.get(key) ?? 0) + dt);
  });
  return { busyMs: busy / 1000, parts: [...parts].map(([k, us]) => [k, us / 1000] as [string, number]).sort((a, b) => b[1] - a[1]) };
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (dir === undefined) throw new Error('usage: node bench/fleet-table-profile.ts DIR');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    // The table's process: the one whose profile holds dynalite's store.
    if (!profile.nodes.some((n) => n.callFrame.url.includes('dynalite/db/index.js'))) continue;
    const { busyMs, parts } = tableProfile(profile);
    const share = (ms: number) => Math.round((ms / busyMs) * 1000) / 10;
    process.stdout.write(`${JSON.stringify({ profile: file, busy_ms: Math.round(busyMs), parts: Object.fromEntries(parts.map(([k, ms]) => [k, { ms: Math.round(ms), percent: share(ms) }])) })}\n`);
  }
}
