import { Hono, type MiddlewareHandler } from 'hono';
import { isFinished } from '../../shared/operations/model.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { integerQuery, jsonBody, type IntegerQuery } from '../http.ts';
import { operationBodySchema } from '../../shared/operations/request.ts';
import { accountParameter, authenticatedRoute, integerQueryParameters, json, jsonSchemaOf, named, pathParameter, problem } from '../openapi/describe.ts';
import { AccountCache, authorizedAccount, type CachedAccount } from './account-cache.ts';
import { IDEMPOTENCY_HEADER, MAX_WAIT_SECONDS, getOperationView, idempotencyKeyOf, submitAndWait, type OperationDeps } from './service.ts';
import { operationViewSchema } from '../../shared/answers/operations.ts';
import { toOperationView } from './view.ts';
import { ACCOUNT_OPERATIONS_QUERY, ACCOUNT_OPERATIONS_TEXT, accountOperationsDescription, accountOperationsPage } from './account-operations.ts';
import { filteredQuery } from '../query-filters.ts';

interface OperationsEnv {
  Variables: ApiEnv['Variables'] & { account: CachedAccount; wait: number };
}

/** No wait unless `?wait=N` is given. */
const WAIT_QUERY: IntegerQuery = { wait: { default: 0, max: MAX_WAIT_SECONDS } };

/** `?wait=N` read before anything else, so a bad query is a 400 whatever the account. */
const waitQuery: MiddlewareHandler<OperationsEnv> = async (c, next) => {
  c.set('wait', (integerQuery(c, WAIT_QUERY) as { wait: number }).wait);
  await next();
};

const operation = named('Operation', jsonSchemaOf(operationViewSchema, 'output'));
const location = { Location: { schema: { type: 'string' as const }, description: '`/vendor/operations/{operationId}`' } };

const submitOperationDescription = authenticatedRoute({
  operationId: 'submitOperation',
  summary: 'Queues a deployment operation on the account: deploy (server-side apply), delete, scale, patch, rollout restart or rollout undo (docs/operations.md).',
  parameters: [
    accountParameter,
    {
      name: IDEMPOTENCY_HEADER,
      in: 'header',
      required: true,
      description: 'Unique per operation (1–255 visible ASCII characters); a retry sends it again unchanged. The same key with the same request answers the same operation; with another request, 409.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    },
    ...integerQueryParameters(WAIT_QUERY, {
      wait: 'After storing it, answer once the operation has finished (200), or after this many seconds (202): one request instead of POST and `GET ?wait`.',
    }),
  ],
  requestBody: { required: true, content: json(named('OperationRequest', jsonSchemaOf(operationBodySchema, 'input'))) },
  responses: {
    '200': { description: 'With `wait`: stored, and finished within the wait; the finished operation. `Location` names it.', headers: location, content: json(operation) },
    '202': {
      description: 'Stored, QUEUED or already RUNNING on an agent (or, for a repeated key, the operation it stands for, with `Idempotent-Replayed: true`); with `wait`, not finished within it. `Location` names it.',
      headers: location,
      content: json(operation),
    },
    '400': problem('Missing Idempotency-Key, bad `wait`, invalid body or manifests, or objects the account may not touch (namespaces, onlyNamespacedResources, unlisted CRDs), each by path; nothing is stored.'),
    '404': problem('No account with that name.'),
    '409': problem('The Idempotency-Key was used for a different request, or the account is not served by agents.'),
    '413': problem('Body over 1 MiB, or the operation too large to store.'),
    '403': problem('The account has permissions and the caller holds none of its WRITE roles (nor an account-manager role).'),
  },
});

const getOperationDescription = authenticatedRoute({
  operationId: 'getOperation',
  summary: "One operation: state, per-object outcomes with the API server's own messages, timestamps.",
  parameters: [
    pathParameter('operationId', 'The operation id.'),
    ...integerQueryParameters(WAIT_QUERY, { wait: 'Answer once the operation has finished, or after this many seconds.' }),
  ],
  responses: {
    '200': { description: 'The operation.', content: json(operation) },
    '400': problem('Bad `wait`.'),
    '404': problem('No operation with that id.'),
    '403': problem("The operation's account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role)."),
  },
});

/**
 * Deployment operations (docs/operations.md), mounted under `/vendor`:
 * `POST /accounts/{accountId}/operations` queues one (one of the account's WRITE roles needed, checked
 * before the body is read; with `?wait=N`, answers once it has finished, 200, or after N seconds, 202),
 * `GET /accounts/{accountId}/operations` lists the account's (READ on it, account-operations.ts),
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
    .post('/accounts/:accountId/operations', submitOperationDescription, waitQuery, write, bodyLimit, async (c) => {
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
    // The query is checked before the account is read, so a bad filter is a 400 whatever the account.
    .get('/accounts/:accountId/operations', accountOperationsDescription(operation), async (c) => {
      const { integers, texts } = filteredQuery(c, ACCOUNT_OPERATIONS_QUERY, ACCOUNT_OPERATIONS_TEXT);
      const account = await authorizedAccount(full.accounts, c.get('caller'), c.req.param('accountId'), 'READ', full.permissionsLog);
      return c.json(await accountOperationsPage(full.table, account.record.name, { limit: integers.limit as number, ...(texts.state === undefined ? {} : { states: texts.state }), ...(texts.after === undefined ? {} : { after: texts.after }) }));
    })
    .get('/operations/:operationId', getOperationDescription, async (c) => {
      const { wait } = integerQuery(c, WAIT_QUERY) as { wait: number };
      return c.json(await getOperationView(full, c.get('caller'), c.req.param('operationId'), wait, c.req.raw.signal));
    });
}
