/**
 * Where the CPU of a deployed plane's processes goes: reads the V8 CPU profiles a bench wrote with
 * `BENCH_CPU_PROF=DIR` (`node --cpu-prof`, bench/support.ts `cpuProfileArgs`) and prints, per process,
 * its busy time without module loading, by package and by our own function (docs/benchmarks.md#operations-npm-run-benchoperations).
 *
 *   BENCH_CPU_PROF=/tmp/prof BENCH_WAKES=on npm run bench:operations && node bench/deployed-profile.ts /tmp/prof
 *
 * A sample is charged to the innermost frame of a package on its stack, so Node's own code (HTTP,
 * sockets, streams, crypto) counts for the package that called it; and, separately, to the innermost
 * function of ours (inclusive of the packages it calls). Samples under module loading and type
 * stripping are left out: start-up is not a cost per operation.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProcessProfile {
  file: string;
  process: string;
  busyMs: number;
  loadingMs: number;
  byPackage: [string, number][];
  byOwnFunction: [string, number][];
}

const PROCESSES: [RegExp, string][] = [
  [/bench\/table-process\.ts$/, 'table'],
  [/bench\/lambda-process\.ts$/, 'api'],
  [/driver\/main\.ts$/, 'replica'],
  [/agent\/main\.ts$/, 'agent'],
];

/** The repository-relative path of a file of ours, or undefined for a package's or Node's. */
function ownPath(url: string): string | undefined {
  if (!url.startsWith('file://') || url.includes('/node_modules/')) return undefined;
  const at = url.search(/\/(shared|driver|functions|agent|bench|cli)\//);
  return at < 0 ? undefined : url.slice(at + 1);
}

function packageOf(url: string): string | undefined {
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return pkg[1];
  const own = ownPath(url);
  return own === undefined ? undefined : `ours: ${own.split('/').slice(0, 2).join('/')}`;
}

const isLoading = (frame: ProfileNode['callFrame']) =>
  frame.url.startsWith('node:internal/modules') || frame.functionName === 'compileSourceTextModule' || /amaro|strip-types/.test(frame.url);

export function summarizeProfile(file: string, profile: CpuProfile): ProcessProfile {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const urls = profile.nodes.map((n) => n.callFrame.url);
  const process = PROCESSES.find(([pattern]) => urls.some((u) => pattern.test(u)))?.[1] ?? 'other';
  const classified = new Map<number, { loading: boolean; owner: string; own: string | undefined }>();
  const classify = (id: number) => {
    const known = classified.get(id);
    if (known !== undefined) return known;
    let loading = false;
    let owner: string | undefined;
    let own: string | undefined;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (isLoading(frame)) loading = true;
      owner ??= packageOf(frame.url);
      if (own === undefined) {
        const path = ownPath(frame.url);
        if (path !== undefined) own = `${path}: ${frame.functionName || '(anonymous)'}`;
      }
    }
    const name = (byId.get(id) as ProfileNode).callFrame.functionName;
    const result = { loading, owner: owner ?? (name.startsWith('(') ? name : 'node (no package on the stack)'), own };
    classified.set(id, result);
    return result;
  };
  const byPackage = new Map<string, number>();
  const byOwn = new Map<string, number>();
  let busy = 0;
  let loading = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    if ((byId.get(id) as ProfileNode).callFrame.functionName === '(idle)') return;
    const c = classify(id);
    if (c.loading) {
      loading += micros;
      return;
    }
    busy += micros;
    byPackage.set(c.owner, (byPackage.get(c.owner) ?? 0) + micros);
    if (c.own !== undefined) byOwn.set(c.own, (byOwn.get(c.own) ?? 0) + micros);
  });
  const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / 1000]);
  return { file, process, busyMs: busy / 1000, loadingMs: loading / 1000, byPackage: sorted(byPackage), byOwnFunction: sorted(byOwn) };
}

/** One row of a breakdown: its time and its share of `busyMs`. */
export function profileRow(busyMs: number): (row: [string, number]) => string {
  return ([name, ms]) => `    ${ms.toFixed(0).padStart(6)} ms ${((100 * ms) / busyMs).toFixed(1).padStart(5)} %  ${name}`;
}

/** The `top` rows by package and by our function, as shares of `busyMs`. */
export function printPackagesAndFunctions(p: ProcessProfile, top: number, busyMs = p.busyMs): void {
  const line = profileRow(busyMs);
  console.log('  by package (Node internals charged to their caller):');
  for (const row of p.byPackage.slice(0, top)) console.log(line(row));
  console.log('  by our innermost function (with what it calls):');
  for (const row of p.byOwnFunction.slice(0, top)) console.log(line(row));
}

function print(p: ProcessProfile, top: number): void {
  console.log(`${p.process} (${p.file}): ${p.busyMs.toFixed(0)} ms busy, ${p.loadingMs.toFixed(0)} ms loading modules left out`);
  printPackagesAndFunctions(p, top);
}

if (import.meta.main) {
  const dir = process.argv[2];
  if (dir === undefined) {
    console.error('usage: node bench/deployed-profile.ts DIR [TOP]');
    process.exit(2);
  }
  const top = Number(process.argv[3] ?? 12);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort()) {
    print(summarizeProfile(file, JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile), top);
  }
}
