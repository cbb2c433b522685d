import { OPERATION_STATES } from '../../shared/operations/model.ts';
import { ACCOUNT_OPERATION_POSITION, MAX_ENTRIES_PER_PAGE, listAccountOperations } from '../../shared/table/operations/by-account.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import type { IntegerQuery } from '../http.ts';
import { accountParameter, authenticatedRoute, integerQueryParameters, json, jsonSchemaOf, named, problem, type DescribedSchema } from '../openapi/describe.ts';
import { oneOf, type TextCheck } from '../query-filters.ts';
import { accountOperationPageSchema, operationViewSchema, type AccountOperationPage } from '../../shared/answers/operations.ts';
import { toOperationView } from './view.ts';

/**
 * `GET /vendor/accounts/{accountId}/operations` (docs/api.md#an-accounts-operations): the account's
 * operations newest first, a page at a time. Pages follow `next`, an opaque position, rather than
 * page numbers: new operations arrive at the front, and a position stays where it was.
 */
export const ACCOUNT_OPERATIONS_QUERY: IntegerQuery = { limit: { default: 50, max: 200 } };

/** The position of a page as served: the entry's sort key, base64url, so callers treat it as opaque. */
export function encodePosition(sortKey: string): string {
  return Buffer.from(sortKey, 'utf8').toString('base64url');
}

export const positionCheck: TextCheck<string> = (raw) => {
  const decoded = /^[A-Za-z0-9_-]{1,80}$/.test(raw) ? Buffer.from(raw, 'base64url').toString('utf8') : '';
  return ACCOUNT_OPERATION_POSITION.test(decoded) ? { value: decoded } : { problem: 'must be the `next` of an earlier page' };
};

export const ACCOUNT_OPERATIONS_TEXT = { state: oneOf(OPERATION_STATES), after: positionCheck };

export async function accountOperationsPage(
  table: TableRef,
  account: string,
  query: { limit: number; states?: ReadonlySet<(typeof OPERATION_STATES)[number]>; after?: string },
): Promise<AccountOperationPage> {
  const page = await listAccountOperations(table, account, {
    limit: query.limit,
    ...(query.after === undefined ? {} : { after: query.after }),
    ...(query.states === undefined ? {} : { states: query.states }),
  });
  return { items: page.records.map(toOperationView), ...(page.next === undefined ? {} : { next: encodePosition(page.next) }) };
}

export function accountOperationsDescription(operation: DescribedSchema) {
  const pageSchema = named('AccountOperationPage', jsonSchemaOf(accountOperationPageSchema, 'output', { Operation: operationViewSchema }), operation);
  return authenticatedRoute({
    operationId: 'listAccountOperations',
    summary: "The account's operations, newest first (one of its READ or WRITE roles, or an account-manager role).",
    parameters: [
      accountParameter,
      ...integerQueryParameters(ACCOUNT_OPERATIONS_QUERY, { limit: 'Operations per page.' }),
      {
        name: 'state',
        in: 'query',
        description: `Only operations in these states: one or more of ${OPERATION_STATES.join(', ')}, separated by commas.`,
        schema: { type: 'string' },
      },
      { name: 'after', in: 'query', description: 'The `next` of the previous page.', schema: { type: 'string' } },
    ],
    responses: {
      '200': {
        description: `One page. With \`state\`, a page looks at ${MAX_ENTRIES_PER_PAGE} operations at most and may hold fewer than \`limit\` while \`next\` says there are more.`,
        content: json(pageSchema),
      },
      '400': problem('Bad `limit`, `state` or `after`, or an unknown query parameter.'),
      '404': problem('No account with that name.'),
      '403': problem('The account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role).'),
    },
  });
}
