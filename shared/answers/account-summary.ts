/**
 * The account summary as the API serves it: the OpenAPI document, the web console's types and
 * vendorctl's reading of the answer are all taken from this schema. Only valibot and plain constants
 * here, so the console can type-check against it (functions/console/client/types.ts).
 */
import * as v from 'valibot';
import { integerSchema } from './fields.ts';
import { ACCOUNT_STATES, SERVED_SOURCES } from '../accounts/schema.ts';

const count = integerSchema;

/** `GET /vendor/account-summary` (docs/api.md#the-account-summary): the accounts the caller may read, counted. */
export const accountSummarySchema = v.object({
  total: count,
  byState: v.pipe(v.object(Object.fromEntries(ACCOUNT_STATES.map((s) => [s, count])) as Record<(typeof ACCOUNT_STATES)[number], typeof count>), v.description('Accounts in each state.')),
  withoutState: v.pipe(count, v.description('Accounts never registered for migration nor assigned: they have no state.')),
  byZone: v.pipe(v.record(v.string(), count), v.description('Accounts of each zone, by zone id; only zones with accounts.')),
  withoutZone: v.pipe(count, v.description('Accounts pinned to no zone.')),
  bySource: v.pipe(v.object(Object.fromEntries(SERVED_SOURCES.map((s) => [s, count])) as Record<(typeof SERVED_SOURCES)[number], typeof count>), v.description('Accounts of each source.')),
});

export type AccountSummary = v.InferOutput<typeof accountSummarySchema>;
