import { Hono } from 'hono';
import { VendorError } from '../../shared/errors.ts';
import { duplicateNameIssues } from '../../shared/accounts/duplicates.ts';
import { activationBatchSchema, registrationBatchSchema } from '../../shared/accounts/schema.ts';
import { parseOrThrow } from '../../shared/accounts/validate.ts';
import { integerQuery, jsonBody } from '../http.ts';
import { activateAccounts, getAccountView, listAccounts, registerAccounts, unregisterAccount, type AccountDeps } from './service.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
/** Pages beyond this are past the end of any table this design holds. */
export const MAX_PAGE = 1_000_000_000;

function parseBatch<T extends typeof registrationBatchSchema | typeof activationBatchSchema>(schema: T, body: unknown) {
  const batch = parseOrThrow(schema, body, 'the request body');
  const duplicates = duplicateNameIssues(batch);
  if (duplicates.length > 0) {
    throw new VendorError('invalid_input', `the request body names an account more than once: ${duplicates.map((d) => d.path).join(', ')}`, {
      issues: duplicates,
    });
  }
  return batch;
}

/** SPEC 4: the five account endpoints, under `/vendor/accounts`. */
export function accountRoutes(deps: AccountDeps): Hono {
  return new Hono()
    .get('/', async (c) => {
      const { page, limit } = integerQuery(c, {
        page: { default: 1, max: MAX_PAGE },
        limit: { default: DEFAULT_LIMIT, max: MAX_LIMIT },
      }) as { page: number; limit: number };
      return c.json(await listAccounts(deps, page, limit));
    })
    .get('/:accountId', async (c) => c.json(await getAccountView(deps, c.req.param('accountId'))))
    .post('/', async (c) => c.json(await registerAccounts(deps, parseBatch(registrationBatchSchema, await jsonBody(c)))))
    .patch('/', async (c) => c.json(await activateAccounts(deps, parseBatch(activationBatchSchema, await jsonBody(c)))))
    .delete('/:accountName', async (c) => c.json(await unregisterAccount(deps, c.req.param('accountName'))));
}
