import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPathTrace, pathTrace } from '../shared/operations/path-trace.ts';
import { pathHops, readPathTraces, type TracedMark } from './operations-hops.ts';

describe('the path trace and its per-hop breakdown', () => {
  it('is off unless VENDOR_PATH_TRACE names a directory', () => {
    expect(process.env.VENDOR_PATH_TRACE).toBeUndefined();
    expect(pathTrace).toBeUndefined();
  });

  it('writes each mark with its time to a file of the process, read back from the directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'path-trace-'));
    try {
      const a = openPathTrace(dir, 'a');
      const b = openPathTrace(dir, 'b');
      // One writer per file: the agent's trace and its process's are the same one.
      expect(openPathTrace(dir, 'a')).toBe(a);
      a('api.store_sent', 'op-1', 1_000.25);
      b('replica.claim_sent', 'op-1', 1_003.5);
      a('api.store_answered', 'op-1');
      a.flush();
      b.flush();
      const marks = readPathTraces(dir).sort((x, y) => x.at - y.at);
      expect(marks.slice(0, 2)).toEqual([
        { at: 1_000.25, mark: 'api.store_sent', id: 'op-1' },
        { at: 1_003.5, mark: 'replica.claim_sent', id: 'op-1' },
      ]);
      // Now on the trace's clock: the machine's monotonic clock, the same in every process.
      expect(marks[2]?.mark).toBe('api.store_answered');
      expect(Math.abs((marks[2]?.at ?? 0) - Number(process.hrtime.bigint()) / 1e6)).toBeLessThan(60_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes each hop from the previous mark passed, joins the marks of the request key and of the operation id, and keeps the side spans apart', () => {
    const op = (id: string, key: string, t0: number, agentMarks: boolean): TracedMark[] => [
      { at: t0, mark: 'bench.sent', id: key },
      { at: t0 + 0.4, mark: 'adapter.request', id: key },
      { at: t0 + 1, mark: 'api.store_sent', id },
      { at: t0 + 2.5, mark: 'api.store_answered', id },
      { at: t0 + 2.6, mark: 'api.wake_sent', id },
      { at: t0 + 2.8, mark: 'api.ask_sent', id },
      { at: t0 + 3, mark: 'replica.wake_received', id },
      { at: t0 + 3.2, mark: 'replica.claim_sent', id },
      // A second claim of the same operation (another replica's) does not move the first.
      { at: t0 + 9, mark: 'replica.claim_sent', id },
      { at: t0 + 4.7, mark: 'replica.claim_answered', id },
      { at: t0 + 4.8, mark: 'replica.operation_sent', id },
      ...(agentMarks ? [{ at: t0 + 5.3, mark: 'agent.received', id }] : []),
      { at: t0 + 10.8, mark: 'replica.result_received', id },
      { at: t0 + 14, mark: 'bench.received', id: key },
    ];
    const marks = [...op('op-1', 'key-1', 1_000, false), ...op('op-2', 'key-2', 2_000, false), ...op('op-3', 'key-3', 3_000, true), { at: 5, mark: 'api.store_sent', id: 'warm-up' }];
    const hops = pathHops(
      [
        { id: 'op-1', key: 'key-1' },
        { id: 'op-2', key: 'key-2' },
        { id: 'op-3', key: 'key-3' },
      ],
      marks,
    );
    expect(hops.n).toBe(3);
    expect(hops.p50_ms).toEqual({
      'bench.sent→adapter.request': 0.4,
      'adapter.request→api.store_sent': 0.6,
      'api.store_sent→api.store_answered': 1.5,
      'api.store_answered→api.wake_sent': 0.1,
      'api.wake_sent→replica.wake_received': 0.4,
      'replica.wake_received→replica.claim_sent': 0.2,
      'replica.claim_sent→replica.claim_answered': 1.5,
      'replica.claim_answered→replica.operation_sent': 0.1,
      // Without the agent's marks the hop spans the agent's whole round trip.
      'replica.operation_sent→replica.result_received': 6,
      'replica.result_received→bench.received': 3.2,
      'replica.operation_sent→agent.received': 0.5,
      'agent.received→replica.result_received': 5.5,
    });
    expect(hops.partial).toEqual({ 'replica.operation_sent→replica.result_received': 2, 'replica.operation_sent→agent.received': 1, 'agent.received→replica.result_received': 1 });
    expect(hops.side_p50_ms).toEqual({ store_sent_to_ask_sent: 1.8 });
  });

  it("splits the agent's round trip at its marks, in path order, and gathers its CPU figures apart from the hops, of the figure's operations only", () => {
    // Written by the agent's process in its own order (the result's mark before the rest): the figure follows the path's.
    const after: [string, number][] = [
      ['replica.operation_sent', 0],
      ['agent.result_written', 5.1],
      ['agent.received', 0.5],
      ['agent.taken', 0.7],
      ['agent.started', 0.8],
      ['agent.patch_sent', 1.5],
      ['agent.patch_answered', 4.5],
      ['agent.finished', 4.7],
      ['replica.result_received', 6],
    ];
    const agentPath = (id: string, t0: number, cpu: number): TracedMark[] => [
      ...after.map(([mark, ms]) => ({ at: t0 + ms, mark, id })),
      { at: cpu, mark: 'agent.cpu_path', id },
      { at: 2 * cpu, mark: 'agent.cpu_per_operation', id },
    ];
    // The warm-up's operation is not among the figure's: neither its hops nor its CPU count.
    const marks = [...agentPath('warm-up', 0, 100), ...agentPath('op-1', 1_000, 1), ...agentPath('op-2', 2_000, 2), ...agentPath('op-3', 3_000, 3)];
    const hops = pathHops(['op-1', 'op-2', 'op-3'].map((id) => ({ id, key: `key-${id}` })), marks);
    expect(hops.n).toBe(3);
    // In path order.
    expect(Object.entries(hops.p50_ms)).toEqual([
      ['replica.operation_sent→agent.received', 0.5],
      ['agent.received→agent.taken', 0.2],
      ['agent.taken→agent.started', 0.1],
      ['agent.started→agent.patch_sent', 0.7],
      ['agent.patch_sent→agent.patch_answered', 3],
      ['agent.patch_answered→agent.finished', 0.2],
      ['agent.finished→agent.result_written', 0.4],
      ['agent.result_written→replica.result_received', 0.9],
    ]);
    expect(hops.partial).toBeUndefined();
    expect(hops.agent_cpu_p50_ms).toEqual({ cpu_path: 2, cpu_per_operation: 4 });
    expect(hops.agent_cpu_p99_ms).toEqual({ cpu_path: 3, cpu_per_operation: 6 });
  });

  it('orders a reserved operation\'s marks: the ask and its answer before the store, "stored" after it, no claim', () => {
    const at = (mark: string, t: number): TracedMark => ({ at: t, mark, id: 'op-r' });
    const marks = [
      at('api.submit', 100),
      at('api.reserve_sent', 100.2),
      at('replica.reserve_received', 100.5),
      at('api.reserve_answered', 100.9),
      at('api.store_sent', 101),
      at('api.store_answered', 104),
      at('api.stored_sent', 104.1),
      at('replica.stored_received', 104.4),
      at('replica.operation_sent', 104.5),
    ];
    // Written in any order by the processes: the figure follows the path's.
    const hops = pathHops([{ id: 'op-r', key: 'key-r' }], [...marks].reverse());
    expect(Object.keys(hops.p50_ms)).toEqual([
      'api.submit→api.reserve_sent',
      'api.reserve_sent→replica.reserve_received',
      'replica.reserve_received→api.reserve_answered',
      'api.reserve_answered→api.store_sent',
      'api.store_sent→api.store_answered',
      'api.store_answered→api.stored_sent',
      'api.stored_sent→replica.stored_received',
      'replica.stored_received→replica.operation_sent',
    ]);
    expect(hops.p50_ms['api.stored_sent→replica.stored_received']).toBe(0.3);
  });
});
