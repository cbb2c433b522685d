/**
 * What the agent identity endpoints take and answer (functions/agent-identities/routes.ts), as the
 * OpenAPI document describes it: bodies from the valibot schemas they are validated with, answers
 * (built by service.ts without one) written out.
 */
import { allowancesSchema, identityNameSchema } from '../../shared/agents/schema.ts';
import { describedProperties, inline, jsonSchemaOf, named, type JsonSchema } from '../openapi/describe.ts';
import { tokenRequestSchema } from './service.ts';

const allowances = jsonSchemaOf(allowancesSchema, 'input');

export const identityNameParameterSchema = jsonSchemaOf(identityNameSchema, 'input');

export const allowancesBody = named('AgentIdentityAllowances', allowances);

export const tokenRequestBody = inline(
  describedProperties(jsonSchemaOf(tokenRequestSchema, 'input'), { expiresInSeconds: 'Lifetime; without it the token is valid until revoked.' }),
);

const time = { type: 'string', format: 'date-time' };

export const agentIdentity = named('AgentIdentity', {
  type: 'object',
  required: ['name', 'zones', 'unzoned', 'agentIds', 'staticAccounts', 'createdAt', 'updatedAt'],
  properties: { name: { type: 'string' }, ...(allowances.properties as Record<string, JsonSchema>), createdAt: time, updatedAt: time },
});

const token = {
  tokenId: { type: 'string' },
  createdAt: time,
  expiresAt: { ...time, description: 'Absent: valid until revoked.' },
  expired: { type: 'boolean' },
};

export const agentToken = named('AgentToken', { type: 'object', required: ['tokenId', 'createdAt', 'expired'], properties: token });

export const issuedAgentToken = named('IssuedAgentToken', {
  type: 'object',
  required: ['identity', 'tokenId', 'token', 'createdAt', 'expired'],
  properties: {
    identity: { type: 'string' },
    ...token,
    token: { type: 'string', description: '`vat_<tokenId>_<secret>`: what the agent presents as `Authorization: Bearer <token>`. Shown only here.' },
  },
});

export const revokedToken = inline({ type: 'object', required: ['identity', 'tokenId'], properties: { identity: { type: 'string' }, tokenId: { type: 'string' } } });
