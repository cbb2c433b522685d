/**
 * What the agent identity endpoints take and answer (functions/agent-identities/routes.ts), as the
 * OpenAPI document describes it: bodies from the valibot schemas they are validated with, answers
 * from the schemas of views.ts the service returns.
 */
import { allowancesSchema, identityNameSchema } from '../../shared/agents/schema.ts';
import { describedProperties, inline, jsonSchemaOf, named } from '../openapi/describe.ts';
import { tokenRequestSchema } from './service.ts';
import { identityListSchema, identityViewSchema, issuedTokenSchema, revokedTokenSchema, tokenListSchema, tokenViewSchema } from '../../shared/answers/agent-identities.ts';

export const identityNameParameterSchema = jsonSchemaOf(identityNameSchema, 'input');

export const allowancesBody = named('AgentIdentityAllowances', jsonSchemaOf(allowancesSchema, 'input'));

export const tokenRequestBody = inline(
  describedProperties(jsonSchemaOf(tokenRequestSchema, 'input'), { expiresInSeconds: 'Lifetime; without it the token is valid until revoked.' }),
);

export const agentIdentity = named('AgentIdentity', jsonSchemaOf(identityViewSchema, 'output'));

export const agentIdentityList = inline(jsonSchemaOf(identityListSchema, 'output', { AgentIdentity: identityViewSchema }), agentIdentity);

export const agentToken = named('AgentToken', jsonSchemaOf(tokenViewSchema, 'output'));

export const agentTokenList = inline(jsonSchemaOf(tokenListSchema, 'output', { AgentToken: tokenViewSchema }), agentToken);

export const issuedAgentToken = named('IssuedAgentToken', jsonSchemaOf(issuedTokenSchema, 'output'));

export const revokedToken = inline(jsonSchemaOf(revokedTokenSchema, 'output'));
