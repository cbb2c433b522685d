import { describe, expect, it } from 'vitest';
import type { OperationTraceRecord } from '../agent/operations/trace.ts';
import { summarizeTrace } from './agent-trace.ts';

const record = (agentId: string, own: number, cpu: number): OperationTraceRecord => ({
  agentId,
  operationId: `${agentId}-${own}`,
  at: {},
  steps: { own, cluster: 2 * own },
  cpu: { path: cpu, sincePrevious: 2 * cpu },
});

describe('bench/agent-trace.ts', () => {
  it("gives each agent's p50 and p99 of every step and of its CPU, leaving out its first operations", () => {
    const records = [record('a', 100, 100), ...[1, 2, 3, 4].map((x) => record('a', x, x / 10)), record('b', 5, 1)];
    const summary = summarizeTrace(records, 1);
    expect(summary['a']).toEqual({
      n: 4,
      p50_ms: { own: 2, cluster: 4, cpu_path: 0.2, cpu_per_operation: 0.4 },
      p99_ms: { own: 4, cluster: 8, cpu_path: 0.4, cpu_per_operation: 0.8 },
    });
    expect(summary['b']).toMatchObject({ n: 0 });
  });
});
