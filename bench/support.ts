/** Small pieces the benchmarks share: timing the driver's own log records, waiting, reading /proc. */
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { Logger } from '../shared/log.ts';

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
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
