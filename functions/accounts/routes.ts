import { Hono, type MiddlewareHandler } from 'hono';
import * as v from 'valibot';
import { VendorError } from '../../shared/errors.ts';
import { duplicateNameIssues } from '../../shared/accounts/duplicates.ts';
import { MAX_BATCH, accountPageSchema, accountSchema, activationBatchSchema, registrationBatchSchema } from '../../shared/accounts/schema.ts';
import { toIssues } from '../../shared/accounts/validate.ts';
import { requireManager } from '../auth/access.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { jsonBody, type IntegerQuery } from '../http.ts';
import { filteredQuery } from '../query-filters.ts';
import { ACCOUNT_FILTER_CHECKS, FILTER_DESCRIPTIONS, accountFilters } from './filters.ts';
import { accountSummary } from './summary.ts';
import { accountSummarySchema } from '../../shared/answers/account-summary.ts';
import { accountParameter, arrayOf, authenticatedRoute, integerQueryParameters, json, jsonSchemaOf, managerOnly, named, problem } from '../openapi/describe.ts';
import { LiveZones } from './live-zones.ts';
import { activateAccounts, getAccountView, listAccounts, registerAccounts, unregisterAccount, type AccountDeps } from './service.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
/** Pages beyond this are past the end of any table this design holds. */
export const MAX_PAGE = 1_000_000_000;

const LIST_QUERY: IntegerQuery = { page: { default: 1, max: MAX_PAGE }, limit: { default: DEFAULT_LIMIT, max: MAX_LIMIT } };

/**
 * Validates a POST or PATCH body, reporting schema problems and repeated names together, so one
 * answer names every bad element and field.
 */
function parseBatch<T extends typeof registrationBatchSchema | typeof activationBatchSchema>(schema: T, body: unknown) {
  // Too many records is the one problem reported then: checking each of them costs time for nothing.
  if (Array.isArray(body) && body.length > MAX_BATCH) {
    const message = `must hold at most ${MAX_BATCH} records`;
    throw new VendorError('invalid_input', `the request body is invalid: (root): ${message}`, { issues: [{ path: '', message }] });
  }
  const result = v.safeParse(schema, body, { abortEarly: false });
  const duplicates = Array.isArray(body) ? duplicateNameIssues(body) : [];
  const issues = [...(result.success ? [] : toIssues(result.issues)), ...duplicates];
  if (issues.length > 0 || !result.success) {
    throw new VendorError('invalid_input', `the request body is invalid: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
      issues,
    });
  }
  return result.output as v.InferOutput<T>;
}

/**
 * The five account endpoints (docs/api.md#endpoints), under `/vendor/accounts`. Reads serve what the caller may read;
 * registering, activating and removing accounts need an account-manager role (checked before the body
 * is read).
 */
const account = named('Account', jsonSchemaOf(accountSchema, 'output'));
const accountPage = named('AccountPage', jsonSchemaOf(accountPageSchema, 'output', { Account: accountSchema }), account);
const tooLarge = problem('Body larger than the limit (5 MiB by default; a batch of 1,000 records of the largest valid size fits).');

const listAccountsDescription = authenticatedRoute({
  operationId: 'listAccounts',
  summary: 'The accounts the caller may read, static and dynamic, sorted by name ascending, narrowed by the filters given (all of them together); `total` counts only those.',
  parameters: [
    ...integerQueryParameters(LIST_QUERY),
    ...Object.entries(FILTER_DESCRIPTIONS).map(([name, description]) => ({ name, in: 'query' as const, description, schema: { type: 'string' as const } })),
  ],
  responses: {
    '200': { description: 'One page; a page past the end has empty `items`.', content: json(accountPage) },
    '400': problem('Bad `page`, `limit`, `state`, `zoneId`, `source` or `namePrefix`, or an unknown query parameter, each named in `errors`.'),
  },
});

const getAccountDescription = authenticatedRoute({
  operationId: 'getAccount',
  summary: 'One account by name.',
  parameters: [accountParameter],
  responses: {
    '200': { description: 'The account.', content: json(account) },
    '404': problem('No account with that name.'),
    '403': problem('The account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role).'),
  },
});

const registerAccountsDescription = authenticatedRoute({
  operationId: 'registerAccounts',
  summary: 'Registers driver-defined accounts for migration to agents (state INACTIVE). Re-POST updates.',
  requestBody: { required: true, content: json(named('RegistrationBatch', jsonSchemaOf(registrationBatchSchema, 'input'))) },
  responses: {
    '200': { description: 'The registered accounts, in request order.', content: json(arrayOf(account)) },
    '400': problem('Invalid body, duplicate names, or a name not defined in the driver service (nothing is written).'),
    '413': tooLarge,
    ...managerOnly,
  },
});

const activateAccountsDescription = authenticatedRoute({
  operationId: 'activateAccounts',
  summary: 'Activates registered accounts (state ACTIVE); they are sent to the agents of their zone, or to all agents.',
  requestBody: { required: true, content: json(named('ActivationBatch', jsonSchemaOf(activationBatchSchema, 'input'))) },
  responses: {
    '200': { description: 'The activated accounts, in request order.', content: json(arrayOf(account)) },
    '400': problem('Invalid body, `state` other than ACTIVE, or a name not defined in the driver service.'),
    '409': problem('An account is not registered or already ACTIVE, or no agent session is live in its zone.'),
    '413': tooLarge,
    ...managerOnly,
  },
});

const removeAccountDescription = authenticatedRoute({
  operationId: 'removeAccount',
  summary: 'Removes a migrated account from its agents.',
  description:
    'The registration and state go and the agents drop the account. When no agent announces it as a static account, its cached resources, cache health and pod metrics are deleted about 30 s later (docs/api.md, DELETE).',
  parameters: [accountParameter],
  responses: {
    '200': { description: 'The account after removal (no longer registered).', content: json(account) },
    '400': problem('The name is not defined in the driver service.'),
    ...managerOnly,
  },
});

export function accountRoutes(given: AccountDeps, bodyLimit: MiddlewareHandler): Hono<ApiEnv> {
  const deps: AccountDeps = { ...given, liveZones: given.liveZones ?? new LiveZones(given.clock) };
  const manager = requireManager();
  return new Hono<ApiEnv>()
    .get('/', listAccountsDescription, async (c) => {
      const { integers, texts } = filteredQuery(c, LIST_QUERY, ACCOUNT_FILTER_CHECKS);
      return c.json(await listAccounts(deps, c.get('caller'), integers.page as number, integers.limit as number, accountFilters(texts)));
    })
    .get('/:accountId', getAccountDescription, async (c) => c.json(await getAccountView(deps, c.get('caller'), c.req.param('accountId'))))
    .post('/', registerAccountsDescription, manager, bodyLimit, async (c) => c.json(await registerAccounts(deps, parseBatch(registrationBatchSchema, await jsonBody(c)))))
    .patch('/', activateAccountsDescription, manager, bodyLimit, async (c) => c.json(await activateAccounts(deps, parseBatch(activationBatchSchema, await jsonBody(c)))))
    // The same path parameter as GET: one path item in the document (docs/api.md#endpoints).
    .delete('/:accountId', removeAccountDescription, manager, async (c) => c.json(await unregisterAccount(deps, c.req.param('accountId'))));
}

const accountSummaryDescription = authenticatedRoute({
  operationId: 'accountSummary',
  summary: 'The accounts the caller may read, counted by state, zone and source.',
  responses: {
    '200': { description: 'The counts.', content: json(named('AccountSummary', jsonSchemaOf(accountSummarySchema, 'output'))) },
    '400': problem('A query parameter (it takes none).'),
  },
});

/**
 * `GET /vendor/account-summary` (docs/api.md#the-account-summary). A path of its own rather than
 * `/vendor/accounts/summary`, which is the path of an account named `summary`.
 */
export function accountSummaryRoutes(deps: AccountDeps): Hono<ApiEnv> {
  return new Hono<ApiEnv>().get('/', accountSummaryDescription, async (c) => {
    filteredQuery(c, {}, {});
    return c.json(await accountSummary(deps, c.get('caller')));
  });
}
