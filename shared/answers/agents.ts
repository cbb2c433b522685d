/**
 * The live agents as `GET /vendor/agents` serves them (docs/api.md#agents): the OpenAPI document, the
 * web console's types and vendorctl's reading of the answer are all taken from these schemas.
 */
import * as v from 'valibot';
import { integerSchema, numberedPageSchema, timestampSchema as timestamp } from './fields.ts';

/** An account an agent holds, as `GET /vendor/agents` serves it. */
export const heldAccountSchema = v.object({
  name: v.string(),
  caching: v.pipe(v.boolean(), v.description("Whether this agent is the one caching the account's resources.")),
});

/** A live agent as `GET /vendor/agents` serves it (docs/api.md#agents). Times are RFC 3339 in UTC. */
export const agentViewSchema = v.object({
  agentId: v.string(),
  zoneId: v.string(),
  identity: v.optional(v.pipe(v.string(), v.description('The agent identity its credential speaks for (docs/api.md#agent-identities).'))),
  version: v.pipe(v.string(), v.description('The agent version it announced.')),
  replicaId: v.pipe(v.string(), v.description('The driver replica holding its stream.')),
  connectedAt: timestamp,
  lastHeartbeatAt: v.pipe(timestamp, v.description('When the driver last renewed its lease on a message from it: at most one heartbeat interval behind; `connectedAt` until the first renewal.')),
  accounts: v.pipe(v.array(heldAccountSchema), v.description('The accounts it holds, by name; for a caller who is not an account manager, only those the caller may read.')),
  caching: v.pipe(integerSchema, v.description('How many of `accounts` it caches.')),
});

export type AgentView = v.InferOutput<typeof agentViewSchema>;

export const agentPageSchema = numberedPageSchema(agentViewSchema);

export type AgentPage = v.InferOutput<typeof agentPageSchema>;
