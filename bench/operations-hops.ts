/**
 * Where an operation's time goes between the processes of the deployed layout, at 0.1 ms resolution:
 * from the marks each process writes with the path trace on (shared/operations/path-trace.ts,
 * `VENDOR_PATH_TRACE`). A hop runs from the previous mark the operation passed to the next one on
 * the path. A process marks what it sends just before it sends it (a mark after the write could come
 * after the receiver's, which the machine may run first) and what it receives as it takes it in. A
 * mark that is absent (an operation that failed before its cluster request, a wake that did not name
 * it) gives its time to the next hop, whose name then says which two marks it spans. The agent's CPU
 * figures (agent/operations/trace.ts), written beside its marks, are gathered apart from the hops.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_CPU_FIGURES, AGENT_PATH_MARKS } from '../agent/operations/trace.ts';
import { PATH_TRACE_SUFFIX } from '../shared/operations/path-trace.ts';
import { percentile, round } from './stats.ts';

/**
 * The marks of the path, in the order an operation passes them. Those of the bench, the adapter and the
 * Lambda handler are keyed by the request's Idempotency-Key (the operation has no id there yet), the
 * rest by the operation's id.
 */
export const PATH_MARKS = [
  'bench.sent',
  'adapter.request',
  'api.invoked',
  'api.submit',
  'api.reserve_sent',
  'replica.reserve_received',
  'api.reserve_answered',
  'api.store_sent',
  'api.store_answered',
  'api.wake_sent',
  'api.stored_sent',
  'replica.wake_received',
  'replica.stored_received',
  'replica.claim_sent',
  'replica.claim_answered',
  'replica.operation_sent',
  ...AGENT_PATH_MARKS,
  'replica.result_received',
  'replica.result_write_sent',
  'replica.result_write_answered',
  'replica.ask_answered',
  'api.answer_received',
  'api.returned',
  'adapter.responded',
  'bench.received',
] as const;

/** Spans beside the path: the result ask goes out beside the store (a POST) and waits at the replica. */
const SIDE_SPANS = {
  store_sent_to_ask_sent: ['api.store_sent', 'api.ask_sent'],
  ask_sent_to_replica: ['api.ask_sent', 'replica.ask_received'],
} as const;

export interface TracedMark {
  at: number;
  mark: string;
  id: string;
}

/** Every mark written to `dir` by every process so far. */
export function readPathTraces(dir: string): TracedMark[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(PATH_TRACE_SUFFIX));
  } catch {
    return [];
  }
  const out: TracedMark[] = [];
  for (const f of files) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      const [at, mark, id] = line.split('\t');
      if (at === undefined || mark === undefined || id === undefined) continue;
      const t = Number(at);
      if (Number.isFinite(t)) out.push({ at: t, mark, id });
    }
  }
  return out;
}

/** One operation of the figure: its id and the Idempotency-Key it was posted with. */
export interface TracedOperation {
  id: string;
  key: string;
}

export interface PathHops {
  /** Operations with at least one mark. */
  n: number;
  p50_ms: Record<string, number>;
  p99_ms: Record<string, number>;
  /** How many operations passed both marks of each hop, where fewer than all did. */
  partial?: Record<string, number>;
  side_p50_ms: Record<string, number>;
  /** The agent's CPU per operation (`cpu_path`, `cpu_per_operation`), of the operations that carry it. */
  agent_cpu_p50_ms: Record<string, number>;
  agent_cpu_p99_ms: Record<string, number>;
}

const ms = (values: number[], p: number) => round(percentile([...values].sort((a, b) => a - b), p), 2);
const percentiles = (values: Map<string, number[]>, p: number) => Object.fromEntries([...values].map(([k, v]) => [k, ms(v, p)]));

function add(values: Map<string, number[]>, name: string, value: number): void {
  let of = values.get(name);
  if (of === undefined) values.set(name, (of = []));
  of.push(value);
}

/**
 * The p50 and p99 of every hop of `operations`, from `marks` (each mark's first time per operation),
 * and of the agent's CPU figures among them.
 */
export function pathHops(operations: readonly TracedOperation[], marks: readonly TracedMark[]): PathHops {
  const byId = new Map<string, Map<string, number>>();
  for (const m of marks) {
    let of = byId.get(m.id);
    if (of === undefined) byId.set(m.id, (of = new Map()));
    if (!of.has(m.mark) || (of.get(m.mark) as number) > m.at) of.set(m.mark, m.at);
  }
  const hops = new Map<string, number[]>();
  const side = new Map<string, number[]>();
  const agentCpu = new Map<string, number[]>();
  let n = 0;
  for (const op of operations) {
    const at = new Map([...(byId.get(op.key) ?? []), ...(byId.get(op.id) ?? [])]);
    if (at.size === 0) continue;
    n++;
    let previous: string | undefined;
    for (const mark of PATH_MARKS) {
      const t = at.get(mark);
      if (t === undefined) continue;
      if (previous !== undefined) add(hops, `${previous}→${mark}`, t - (at.get(previous) as number));
      previous = mark;
    }
    for (const [name, [from, to]] of Object.entries(SIDE_SPANS)) {
      const a = at.get(from);
      const b = at.get(to);
      if (a !== undefined && b !== undefined) add(side, name, b - a);
    }
    for (const [name, mark] of Object.entries(AGENT_CPU_FIGURES)) {
      const amount = at.get(mark);
      if (amount !== undefined) add(agentCpu, name, amount);
    }
  }
  const partial = Object.fromEntries([...hops].filter(([, v]) => v.length < n).map(([k, v]) => [k, v.length]));
  return {
    n,
    p50_ms: percentiles(hops, 50),
    p99_ms: percentiles(hops, 99),
    ...(Object.keys(partial).length === 0 ? {} : { partial }),
    side_p50_ms: percentiles(side, 50),
    agent_cpu_p50_ms: percentiles(agentCpu, 50),
    agent_cpu_p99_ms: percentiles(agentCpu, 99),
  };
}
