import { Hono, type MiddlewareHandler } from 'hono';
import type { ApiEnv } from '../auth/caller.ts';
import { integerQuery, jsonBody } from '../http.ts';
import { AccountCache, authorizedAccount, type CachedAccount } from './account-cache.ts';
import { IDEMPOTENCY_HEADER, MAX_WAIT_SECONDS, getOperationView, idempotencyKeyOf, submitOperation, type OperationDeps } from './service.ts';

interface OperationsEnv {
  Variables: ApiEnv['Variables'] & { account: CachedAccount };
}

/**
 * Deployment operations (docs/operations.md), mounted under `/vendor`:
 * `POST /accounts/{accountId}/operations` queues one (one of the account's WRITE roles needed, checked
 * before the body is read), `GET /operations/{operationId}` reads it (READ on its account). The
 * account records that decide are kept for a second (account-cache.ts).
 */
export function operationRoutes(deps: Omit<OperationDeps, 'accounts'> & { accounts?: AccountCache }, bodyLimit: MiddlewareHandler): Hono<ApiEnv> {
  const full: OperationDeps = { ...deps, accounts: deps.accounts ?? new AccountCache(deps.table, deps.clock) };
  const write: MiddlewareHandler<OperationsEnv> = async (c, next) => {
    c.set('account', await authorizedAccount(full.accounts, c.get('caller'), c.req.param('accountId') ?? '', 'WRITE', full.permissionsLog));
    await next();
  };
  return new Hono<ApiEnv>()
    .post('/accounts/:accountId/operations', write, bodyLimit, async (c) => {
      const key = idempotencyKeyOf(c.req.header(IDEMPOTENCY_HEADER));
      const body = await jsonBody(c, 'a JSON object naming an action');
      const { view, created } = await submitOperation(full, c.get('caller'), c.get('account'), key, body);
      c.header('Location', `/vendor/operations/${view.id}`);
      // A replay answers as the first request did, and says so.
      if (!created) c.header('Idempotent-Replayed', 'true');
      return c.json(view, 202);
    })
    .get('/operations/:operationId', async (c) => {
      const { wait } = integerQuery(c, { wait: { default: 0, max: MAX_WAIT_SECONDS } }) as { wait: number };
      return c.json(await getOperationView(full, c.get('caller'), c.req.param('operationId'), wait, c.req.raw.signal));
    });
}
