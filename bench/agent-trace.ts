/**
 * Reads the agent's operation trace (agent/operations/trace.ts, docs/operations.md#the-agents-part-of-the-path)
 * and prints, per agent, the p50 and p99 of each step of its part of the path and of the agent's CPU
 * (`cpu_path`: from the arrival to the result's write; `cpu_per_operation`: from one result's write to
 * the next), in ms:
 *
 *   VENDOR_AGENT_OPERATION_TRACE=/tmp/trace.jsonl BENCH_WAKES=on npm run bench:operations
 *   node bench/agent-trace.ts /tmp/trace.jsonl [SKIP]
 *
 * The agents inherit the bench's environment, so the variable reaches them. SKIP leaves out each
 * agent's first operations (the warm-up: 0 by default).
 */
import { readFileSync } from 'node:fs';
import type { OperationTraceRecord } from '../agent/operations/trace.ts';
import { percentile, round } from './stats.ts';

export function summarizeTrace(records: readonly OperationTraceRecord[], skip = 0): Record<string, { n: number; p50_ms: Record<string, number>; p99_ms: Record<string, number> }> {
  const byAgent = new Map<string, OperationTraceRecord[]>();
  for (const r of records) byAgent.set(r.agentId, [...(byAgent.get(r.agentId) ?? []), r]);
  const out: ReturnType<typeof summarizeTrace> = {};
  for (const [agent, all] of byAgent) {
    const kept = all.slice(skip);
    const figures = (r: OperationTraceRecord): Record<string, number> => ({ ...r.steps, ...(r.cpu?.path === undefined ? {} : { cpu_path: r.cpu.path }), ...(r.cpu?.sincePrevious === undefined ? {} : { cpu_per_operation: r.cpu.sincePrevious }) });
    const names = [...new Set(kept.flatMap((r) => Object.keys(figures(r))))];
    const at = (p: number) => Object.fromEntries(names.map((s) => [s, round(percentile(kept.map((r) => figures(r)[s] ?? 0).sort((a, b) => a - b), p), 2)]));
    out[agent] = { n: kept.length, p50_ms: at(50), p99_ms: at(99) };
  }
  return out;
}

if (import.meta.main) {
  const file = process.argv[2];
  if (file === undefined) {
    console.error('usage: node bench/agent-trace.ts TRACE_FILE [SKIP]');
    process.exit(2);
  }
  const records = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as OperationTraceRecord);
  for (const [agent, s] of Object.entries(summarizeTrace(records, Number(process.argv[3] ?? 0)))) console.log(JSON.stringify({ agent, ...s }));
}
