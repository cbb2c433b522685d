/**
 * What the driver's hooks count, kept here so each hook stays one line and the metrics module is the
 * one place that knows how an event maps onto series.
 */
import type { DriverMetrics } from './metrics.ts';

/** The open operations of one read of the queue, by state; states no longer seen read 0. */
export function recordOpenOperations(metrics: DriverMetrics | undefined, entries: readonly { state: string }[]): void {
  if (metrics === undefined) return;
  metrics.operationsOpen.reset();
  for (const state of ['QUEUED', 'RUNNING']) metrics.operationsOpen.set({ state }, 0);
  for (const e of entries) metrics.operationsOpen.inc({ state: e.state });
}

/** An operation this replica finished: its final state and how long it took from creation. */
export function recordOperationEnd(metrics: DriverMetrics | undefined, op: { state: string; createdAt: number; finishedAt?: number | undefined }, now: number): void {
  if (metrics === undefined) return;
  metrics.operationsFinished.inc({ state: op.state });
  metrics.operationDuration.observe({ state: op.state }, Math.max(0, (op.finishedAt ?? now) - op.createdAt) / 1000);
}

/** Resource writes that reached the table, each with the time from taking it (ms). */
export function recordResourceWrites(metrics: DriverMetrics | undefined, lagsMs: readonly number[]): void {
  if (metrics === undefined) return;
  metrics.resourceObjectsWritten.inc(lagsMs.length);
  for (const lag of lagsMs) metrics.resourceWriteLag.observe(lag / 1000);
}
