import { Hono, type MiddlewareHandler } from 'hono';
import { isFinished } from '../../shared/operations/model.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { integerQuery, jsonBody } from '../http.ts';
import { AccountCache, authorizedAccount, type CachedAccount } from './account-cache.ts';
import { IDEMPOTENCY_HEADER, MAX_WAIT_SECONDS, getOperationView, idempotencyKeyOf, submitAndWait, type OperationDeps } from './service.ts';
import { toOperationView } from './view.ts';

interface OperationsEnv {
  Variables: ApiEnv['Variables'] & { account: CachedAccount; wait: number };
}

/** `?wait=N` read before anything else, so a bad query is a 400 whatever the account. */
const waitQuery: MiddlewareHandler<OperationsEnv> = async (c, next) => {
  c.set('wait', (integerQuery(c, { wait: { default: 0, max: MAX_WAIT_SECONDS } }) as { wait: number }).wait);
  await next();
};

/**
 * Deployment operations (docs/operations.md), mounted under `/vendor`:
 * `POST /accounts/{accountId}/operations` queues one (one of the account's WRITE roles needed, checked
 * before the body is read; with `?wait=N`, answers once it has finished, 200, or after N seconds, 202),
 * `GET /operations/{operationId}` reads it (READ on its account; `?wait=N` likewise). The account
 * records that decide are kept for a second (account-cache.ts).
 */
export function operationRoutes(deps: Omit<OperationDeps, 'accounts'> & { accounts?: AccountCache }, bodyLimit: MiddlewareHandler): Hono<ApiEnv> {
  const full: OperationDeps = { ...deps, accounts: deps.accounts ?? new AccountCache(deps.table, deps.clock) };
  const write: MiddlewareHandler<OperationsEnv> = async (c, next) => {
    c.set('account', await authorizedAccount(full.accounts, c.get('caller'), c.req.param('accountId') ?? '', 'WRITE', full.permissionsLog));
    await next();
  };
  return new Hono<ApiEnv>()
    .post('/accounts/:accountId/operations', waitQuery, write, bodyLimit, async (c) => {
      const wait = c.get('wait');
      const key = idempotencyKeyOf(c.req.header(IDEMPOTENCY_HEADER));
      const body = await jsonBody(c, 'a JSON object naming an action');
      const { record, created } = await submitAndWait(full, c.get('caller'), c.get('account'), key, body, wait, c.req.raw.signal);
      c.header('Location', `/vendor/operations/${record.id}`);
      // A replay answers as the first request did, and says so.
      if (!created) c.header('Idempotent-Replayed', 'true');
      // With `wait`, a finished operation is the answer itself (200); one still open is accepted (202).
      return c.json(toOperationView(record), wait > 0 && isFinished(record.state) ? 200 : 202);
    })
    .get('/operations/:operationId', async (c) => {
      const { wait } = integerQuery(c, { wait: { default: 0, max: MAX_WAIT_SECONDS } }) as { wait: number };
      return c.json(await getOperationView(full, c.get('caller'), c.req.param('operationId'), wait, c.req.raw.signal));
    });
}
