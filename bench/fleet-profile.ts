/**
 * Where the CPU of `bench:fleet`'s processes goes, by the steps of an activation: reads the V8 CPU
 * profiles `BENCH_CPU_PROF=DIR npm run bench:fleet` wrote and prints, per process (the replicas, the
 * API, the table), its busy time by step, then by package and by our own function
 * (bench/deployed-profile.ts). docs/benchmarks.md#fleet-npm-run-benchfleet.
 *
 *   BENCH_CPU_PROF=/tmp/prof npm run bench:fleet && node bench/fleet-profile.ts /tmp/prof [TOP]
 *
 * A sample is charged to the step of the innermost frame on its stack that names one (a JSON.parse
 * or JSON.stringify at the top of the stack is charged to JSON whoever called it); what no frame
 * names (sockets and streams reached from the event loop) is `node: sockets, streams, microtasks`.
 * Profiles cover each process's whole life (the kill, join and leave phases too), and samples under
 * module loading are left out.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { printPackagesAndFunctions, profileRow, summarizeProfile } from './deployed-profile.ts';

type CpuProfile = Parameters<typeof summarizeProfile>[1];
type ProfileNode = CpuProfile['nodes'][number];

const FLEET_PROCESSES: [RegExp, string][] = [
  [/bench\/fleet-table\.ts$/, 'table'],
  [/bench\/fleet-api\.ts$/, 'api'],
  [/driver\/main\.ts$/, 'replica'],
];

/** Steps, innermost first wins; each matched against `<url> <function>` of a frame. */
const STEPS: [RegExp, string][] = [
  [/\/(pino|sonic-boom|@pinojs)\/|shared\/log\.ts/, 'logs'],
  [/\/prom-client\/|driver\/metrics\//, 'metrics'],
  [/\/valibot\/|shared\/protocol\/validate\.ts|driver\/validate\.ts/, 'protocol validation'],
  [/\/(@grpc|protobufjs|@protobufjs)\/|shared\/protocol\/|node:internal\/http2|node:http2|driver\/agent-session\.ts|driver\/server\.ts|driver\/keyed-serial\.ts/, 'gRPC, protobuf and the session'],
  [/\/(dynalite|level-transcoder|abstract-level|memory-level|big\.js|lazy|async|lock|buffer-crc32|functional-red-black-tree)\/|shared\/table\/core\/(embedded|dynalite-store)\.ts/, 'dynalite and its store'],
  [/node:_http_server|@hono\/node-server/, 'HTTP server'],
  [/\/(@smithy|@aws-sdk|@aws)\/|shared\/table\/core\/|driver\/backoff\.ts|node:_http_(client|agent|common|incoming|outgoing)|node:internal\/crypto/, 'table client (SDK, signing, HTTP)'],
  [/driver\/accounts\/feed-reader\.ts|shared\/table\/accounts\/feed\.ts/, 'feed reader'],
  [/driver\/accounts\/group-commit\.ts|shared\/table\/accounts\/(held|facets|facet-listing|rank)\.ts/, 'group commit and index follows'],
  [/driver\/accounts\/spread(-pass)?\.ts/, 'spread pass'],
  [/driver\/accounts\/(plan|wanted|hand-out-lead|assignment-messages|local-sessions|replica-accounts|presence)\.ts|shared\/accounts\//, 'assignment decisions'],
  [/driver\/accounts\/|shared\/table\/accounts\//, 'reconciler and account items'],
  [/node:internal\/timers|shared\/(waker|clock)\.ts|driver\/wake\//, 'timers and wakes'],
  [/functions\//, 'API handlers'],
];

const isLoading = (frame: ProfileNode['callFrame']) =>
  frame.url.startsWith('node:internal/modules') || frame.functionName === 'compileSourceTextModule' || /amaro|strip-types/.test(frame.url);

export function processOf(profile: CpuProfile): string {
  return FLEET_PROCESSES.find(([pattern]) => profile.nodes.some((n) => pattern.test(n.callFrame.url)))?.[1] ?? 'other';
}

/** Busy ms by step over the profile's life, loading left out. */
export function bySteps(profile: CpuProfile): { busyMs: number; steps: [string, number][] } {
  // The table process only serves HTTP: Node's HTTP parsing there is its server's.
  const steps: [RegExp, string][] = processOf(profile) === 'table' ? [[/node:_http_/, 'HTTP server'], ...STEPS] : STEPS;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stepOf = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    const known = stepOf.get(id);
    if (known !== undefined) return known;
    const leaf = (byId.get(id) as ProfileNode).callFrame;
    let step: string | null | undefined = leaf.url === '' && (leaf.functionName === 'parse' || leaf.functionName === 'stringify') ? 'JSON' : undefined;
    if (leaf.functionName === '(garbage collector)') step = 'garbage collection';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (isLoading(frame)) {
        step = null;
        break;
      }
      if (step === undefined) step = steps.find(([pattern]) => pattern.test(`${frame.url} ${frame.functionName}`))?.[1];
    }
    const result = step === undefined ? (leaf.functionName.startsWith('(') ? leaf.functionName : 'node: sockets, streams, microtasks') : step;
    stepOf.set(id, result);
    return result;
  };
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    if ((byId.get(id) as ProfileNode).callFrame.functionName === '(idle)') return;
    const step = classify(id);
    if (step === null) return;
    const micros = profile.timeDeltas[i] ?? 0;
    busy += micros;
    totals.set(step, (totals.get(step) ?? 0) + micros);
  });
  return { busyMs: busy / 1000, steps: [...totals].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / 1000]) };
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (dir === undefined) {
    console.error('usage: node bench/fleet-profile.ts DIR [TOP]');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 12);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    const { busyMs, steps } = bySteps(profile);
    const line = profileRow(busyMs);
    console.log(`${processOf(profile)} (${file}): ${busyMs.toFixed(0)} ms busy`);
    console.log('  by step:');
    for (const row of steps) console.log(line(row));
    printPackagesAndFunctions(summarizeProfile(file, profile), top, busyMs);
  }
}
