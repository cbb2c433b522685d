import type { Hono } from 'hono';
import { createApp } from '../../functions/app.ts';
import { createApiAuth, type ApiAuth } from '../../functions/auth/authenticator.ts';
import type { ApiEnv } from '../../functions/auth/caller.ts';
import { ManualClock } from './manual-clock.ts';
import type { AccountSettings } from '../../shared/accounts/settings.ts';
import type { Logger } from '../../shared/log.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { putSession } from '../../shared/table/agents/sessions.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import type { TestTables } from './table.ts';

/** The admin token of test apps (local use only; never a default of the product). */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef-0123';

/** Authentication with the test admin token only. */
export function adminTokenAuth(): ApiAuth {
  return createApiAuth({ adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: false });
}

export interface ApiFixture {
  app: Hono<ApiEnv>;
  table: TableRef;
  clock: ManualClock;
  /**
   * Sends a request through `app.request()`; `body` is JSON-encoded unless it is a string. It carries
   * the bearer `token` (the test admin token by default; `null` sends no Authorization header).
   */
  call(method: string, path: string, body?: unknown, token?: string | null): Promise<{ status: number; type: string; headers: Headers; json: Record<string, unknown> }>;
  /** Records a live agent session (lease one minute ahead of the clock). */
  connectAgent(agentId: string, zoneId: string): Promise<void>;
}

export async function apiFixture(
  tables: TestTables,
  driverAccounts: AccountSettings[] = [],
  options: { maxBodyBytes?: number; auth?: ApiAuth; logger?: Logger } = {},
): Promise<ApiFixture> {
  const table = await tables.fresh();
  const clock = new ManualClock(1_700_000_000_000);
  await syncSource(table, { id: 'driver-config', kind: 'driver-config' }, driverAccounts, clock.now());
  const { auth, ...rest } = options;
  const app = createApp({ table, clock, auth: auth ?? adminTokenAuth(), ...rest });
  return {
    app,
    table,
    clock,
    async call(method, path, body, token = TEST_ADMIN_TOKEN) {
      const init: RequestInit = { method, headers: token === null ? {} : { authorization: `Bearer ${token}` } };
      if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
      const res = await app.request(path, init);
      const text = await res.text();
      return { status: res.status, type: res.headers.get('content-type') ?? '', headers: res.headers, json: text === '' ? ({} as never) : JSON.parse(text) };
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
