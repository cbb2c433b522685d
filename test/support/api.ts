import type { Hono } from 'hono';
import { createApp } from '../../functions/app.ts';
import { ManualClock } from '../../shared/clock.ts';
import type { AccountSettings } from '../../shared/accounts/schema.ts';
import type { TableRef } from '../../shared/table/client.ts';
import { putSession } from '../../shared/table/sessions.ts';
import { syncSource } from '../../shared/table/sources.ts';
import type { TestTables } from './table.ts';

export interface ApiFixture {
  app: Hono;
  table: TableRef;
  clock: ManualClock;
  /** Sends a request through `app.request()`; `body` is JSON-encoded unless it is a string. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; type: string; json: Record<string, unknown> }>;
  /** Records a live agent session (lease one minute ahead of the clock). */
  connectAgent(agentId: string, zoneId: string): Promise<void>;
}

export async function apiFixture(tables: TestTables, driverAccounts: AccountSettings[] = [], options: { maxBodyBytes?: number } = {}): Promise<ApiFixture> {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, driverAccounts, clock.now());
  const app = createApp({ table, clock, ...options });
  return {
    app,
    table,
    clock,
    async call(method, path, body) {
      const init: RequestInit = { method };
      if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
      const res = await app.request(path, init);
      const text = await res.text();
      return { status: res.status, type: res.headers.get('content-type') ?? '', json: text === '' ? ({} as never) : JSON.parse(text) };
    },
    async connectAgent(agentId, zoneId) {
      await putSession(table, {
        agentId,
        zoneId,
        replicaId: 'replica-1',
        connectedAt: clock.now(),
        leaseExpiresAt: clock.now() + 60_000,
        agentVersion: '1.0.0',
        staticAccounts: [],
      });
    },
  };
}
