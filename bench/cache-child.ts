/**
 * What both benchmark children share: one JSON line per report on stdout, commands as lines on
 * stdin, and memory figures (peak RSS from the kernel's high-water mark, settled RSS after a full GC
 * and a pause).
 */
import { createInterface } from 'node:readline';

export function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export function peakRssBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** RSS and heap in use after full garbage collections and a pause. */
export async function settledMemory(): Promise<{ rss: number; heapUsed: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 700));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed };
}

/** Calls `on[command](argument)` for each line `command [argument]` read from stdin. */
export function commands(on: Record<string, (argument: string) => void | Promise<void>>): void {
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    const [name = '', argument = ''] = line.trim().split(/\s+/);
    const run = on[name];
    if (run !== undefined) void Promise.resolve(run(argument)).catch((e: unknown) => report({ event: 'error', message: (e as Error).message }));
  });
}

/** The kinds the benchmark cluster is seeded with, as both children list them. */
export const BENCH_KINDS = [
  { kind: 'Pod', path: '/api/v1/pods' },
  { kind: 'ReplicaSet', path: '/apis/apps/v1/replicasets' },
  { kind: 'Deployment', path: '/apis/apps/v1/deployments' },
  { kind: 'Service', path: '/api/v1/services' },
  { kind: 'ConfigMap', path: '/api/v1/configmaps' },
  { kind: 'Secret', path: '/api/v1/secrets' },
  { kind: 'ServiceAccount', path: '/api/v1/serviceaccounts' },
  { kind: 'StatefulSet', path: '/apis/apps/v1/statefulsets' },
  { kind: 'DaemonSet', path: '/apis/apps/v1/daemonsets' },
  { kind: 'Job', path: '/apis/batch/v1/jobs' },
] as const;
