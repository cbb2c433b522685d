import { Hono } from 'hono';
import { MAX_NAME_LENGTH } from '../../shared/accounts/settings.ts';
import { getAccounts } from '../../shared/table/accounts/records.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { hasAccountAccess } from '../auth/access.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { authenticatedRoute, inline, json, jsonSchemaOf, problem } from '../openapi/describe.ts';
import { filteredQuery, type TextCheck } from '../query-filters.ts';
import { callerSchema, type CallerView } from './caller-view.ts';

/** Accounts one `GET /vendor/caller` may ask about: a page of the console's account list fits. */
export const MAX_CALLER_ACCOUNTS = 100;

/** Account names separated by commas, each 1–253 characters, at most MAX_CALLER_ACCOUNTS, no repeats. */
const accountNamesCheck: TextCheck<string[]> = (raw) => {
  const names = raw.split(',');
  if (names.some((n) => n.length === 0 || n.length > MAX_NAME_LENGTH)) return { problem: `must be account names (1 to ${MAX_NAME_LENGTH} characters) separated by commas` };
  if (names.length > MAX_CALLER_ACCOUNTS) return { problem: `at most ${MAX_CALLER_ACCOUNTS} account names` };
  if (new Set(names).size !== names.length) return { problem: 'names an account more than once' };
  return { value: names };
};

const callerDescription = authenticatedRoute({
  operationId: 'getCaller',
  summary:
    'Who the caller is and what it may do (docs/api.md#the-caller): its subject, roles and whether it manages accounts, and for each account named in `accounts` whether it may read and write it, decided by the same rule as every route.',
  parameters: [{ name: 'accounts', in: 'query', description: `Up to ${MAX_CALLER_ACCOUNTS} account names separated by commas.`, schema: { type: 'string' } }],
  responses: {
    '200': {
      description: 'The caller; `accounts` lists each named account that exists, in the order asked, with `read` and `write`.',
      content: json(inline(jsonSchemaOf(callerSchema, 'output'))),
    },
    '400': problem('A bad `accounts` value, or an unknown query parameter.'),
  },
});

/** `GET /vendor/caller`: what the web console asks before it shows a control (docs/console.md#roles). */
export function callerRoutes(deps: { table: TableRef }): Hono<ApiEnv> {
  return new Hono<ApiEnv>().get('/', callerDescription, async (c) => {
    const { texts } = filteredQuery(c, {}, { accounts: accountNamesCheck });
    const caller = c.get('caller');
    const names = texts.accounts ?? [];
    const records = names.length === 0 ? new Map() : await getAccounts(deps.table, names);
    // A list rather than an object keyed by name: `__proto__` is a valid account name.
    const accounts = names.flatMap((name) => {
      const record = records.get(name);
      return record === undefined ? [] : [{ name, read: hasAccountAccess(caller, record, 'READ'), write: hasAccountAccess(caller, record, 'WRITE') }];
    });
    const answer: CallerView = { via: caller.via, subject: caller.subject, roles: [...caller.roles].sort(), manager: caller.manager, accounts };
    return c.json(answer);
  });
}
