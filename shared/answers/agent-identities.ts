/**
 * What the agent identity endpoints answer (functions/agent-identities/routes.ts, docs/api.md#agent-identities):
 * the service returns these types and the OpenAPI document and vendorctl's reading of the answers are
 * taken from these schemas, so an answer and its description cannot part. Only valibot and shared
 * schemas here.
 */
import * as v from 'valibot';
import { timestampSchema as timestamp } from './fields.ts';
import { allowanceLists } from '../agents/schema.ts';

/** An identity kept in the table, every allowance given. */
export const identityViewSchema = v.object({
  name: v.string(),
  ...allowanceLists,
  createdAt: timestamp,
  updatedAt: timestamp,
});

export type IdentityView = v.InferOutput<typeof identityViewSchema>;

export const identityListSchema = v.object({ items: v.array(identityViewSchema) });

export type IdentityList = v.InferOutput<typeof identityListSchema>;

/** A token as it is listed: never the token or its digest. */
export const tokenViewSchema = v.object({
  tokenId: v.string(),
  createdAt: timestamp,
  expiresAt: v.optional(v.pipe(timestamp, v.description('Absent: valid until revoked.'))),
  expired: v.boolean(),
});

export type TokenView = v.InferOutput<typeof tokenViewSchema>;

export const tokenListSchema = v.object({ items: v.array(tokenViewSchema) });

export type TokenList = v.InferOutput<typeof tokenListSchema>;

/** The answer that issues a token: the one place the token is ever shown. */
export const issuedTokenSchema = v.object({
  identity: v.string(),
  ...tokenViewSchema.entries,
  token: v.pipe(v.string(), v.description('`vat_<tokenId>_<secret>`: what the agent presents as `Authorization: Bearer <token>`. Shown only here.')),
});

export type IssuedTokenView = v.InferOutput<typeof issuedTokenSchema>;

export const revokedTokenSchema = v.object({ identity: v.string(), tokenId: v.string() });

export type RevokedTokenView = v.InferOutput<typeof revokedTokenSchema>;
