/**
 * A driver replica as deployed beside the API (driver/wake/replica.ts): wakes, result asks and
 * reservations on a port of its own on loopback, agents admitted with `AGENT_TOKEN`, its log in the
 * world's driver log. The suites of wakes, result asks and reservations start theirs here.
 */
import * as v from 'valibot';
import { parseDriverGrpcConfig } from '../../driver/config.ts';
import { DRIVER_MODULES } from '../../driver/modules.ts';
import type { Driver } from '../../driver/server.ts';
import { wakeSectionSchema } from '../../driver/wake/config.ts';
import { startWakeableDriver } from '../../driver/wake/replica.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { AGENT_TOKEN, FAST_ASSIGNMENT, FAST_OPERATIONS, type AccountsWorld } from './accounts-world.ts';

export interface WakeReplicaOptions {
  table: TableRef;
  /** The wake secret; undefined turns wakes off. */
  secret: string | undefined;
  assignmentPollMs: number;
  operationsPollMs: number;
  /** The wake section beyond its address. */
  wake?: Record<string, unknown>;
}

/** The replica stops at the world's next reset, if its suite did not stop it first (closing twice is harmless). */
export async function startWakeReplica(world: AccountsWorld, options: WakeReplicaOptions): Promise<Driver> {
  const driver = await startWakeableDriver({
    config: parseDriverGrpcConfig({
      grpc: { host: '127.0.0.1', port: 0 },
      auth: { tokens: [AGENT_TOKEN] },
      sessions: { heartbeatIntervalMs: 200, leaseMs: 5_000 },
      assignment: { ...FAST_ASSIGNMENT, pollIntervalMs: options.assignmentPollMs },
      operations: { ...FAST_OPERATIONS, pollIntervalMs: options.operationsPollMs },
    }),
    table: options.table,
    log: world.driverLogs.log,
    modules: DRIVER_MODULES,
    wake: v.parse(wakeSectionSchema, { host: '127.0.0.1', port: 0, ...options.wake }),
    wakeSecret: options.secret,
  });
  let closed: Promise<void> | undefined;
  const close = (graceMs?: number) => (closed ??= driver.close(graceMs));
  world.onReset(() => close(100));
  return { ...driver, close };
}
