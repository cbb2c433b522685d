/**
 * The caller as `GET /vendor/caller` serves it (docs/api.md#the-caller): the OpenAPI document and the
 * web console's types are both taken from this schema. Only valibot here, so the console can
 * type-check against it (functions/console/client/types.ts).
 */
import * as v from 'valibot';

/** What the caller may do with one account it named. */
const accountAccessSchema = v.object({ name: v.string(), read: v.boolean(), write: v.boolean() });

export const callerSchema = v.object({
  via: v.picklist(['admin-token', 'oidc']),
  subject: v.string(),
  roles: v.array(v.string()),
  manager: v.pipe(v.boolean(), v.description('May register, activate and remove accounts, and read and write every account.')),
  accounts: v.array(accountAccessSchema),
});

export type CallerView = v.InferOutput<typeof callerSchema>;
