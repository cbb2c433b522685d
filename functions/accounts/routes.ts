import { Hono, type MiddlewareHandler } from 'hono';
import * as v from 'valibot';
import { VendorError } from '../../shared/errors.ts';
import { duplicateNameIssues } from '../../shared/accounts/duplicates.ts';
import { MAX_BATCH, activationBatchSchema, registrationBatchSchema } from '../../shared/accounts/schema.ts';
import { toIssues } from '../../shared/accounts/validate.ts';
import { requireManager } from '../auth/access.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { integerQuery, jsonBody } from '../http.ts';
import { activateAccounts, getAccountView, listAccounts, registerAccounts, unregisterAccount, type AccountDeps } from './service.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
/** Pages beyond this are past the end of any table this design holds. */
export const MAX_PAGE = 1_000_000_000;

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
export function accountRoutes(deps: AccountDeps, bodyLimit: MiddlewareHandler): Hono<ApiEnv> {
  const manager = requireManager();
  return new Hono<ApiEnv>()
    .get('/', async (c) => {
      const { page, limit } = integerQuery(c, {
        page: { default: 1, max: MAX_PAGE },
        limit: { default: DEFAULT_LIMIT, max: MAX_LIMIT },
      }) as { page: number; limit: number };
      return c.json(await listAccounts(deps, c.get('caller'), page, limit));
    })
    .get('/:accountId', async (c) => c.json(await getAccountView(deps, c.get('caller'), c.req.param('accountId'))))
    .post('/', manager, bodyLimit, async (c) => c.json(await registerAccounts(deps, parseBatch(registrationBatchSchema, await jsonBody(c)))))
    .patch('/', manager, bodyLimit, async (c) => c.json(await activateAccounts(deps, parseBatch(activationBatchSchema, await jsonBody(c)))))
    .delete('/:accountName', manager, async (c) => c.json(await unregisterAccount(deps, c.req.param('accountName'))));
}
