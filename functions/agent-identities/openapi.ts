/** The OpenAPI entries of the agent identity endpoints (functions/agent-identities/routes.ts). */
import { authResponses, json, problem, ref } from '../openapi-parts.ts';
import { MAX_IDENTITY_NAME_LENGTH } from '../../shared/agents/schema.ts';
import { MAX_TOKEN_LIFETIME_SECONDS } from './service.ts';

const nameParam = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'The identity name: letters, digits, `.`, `_`, `-`, starting and ending with a letter or digit.',
  schema: { type: 'string', maxLength: MAX_IDENTITY_NAME_LENGTH },
};
const managersOnly = { ...authResponses, '403': problem('The caller holds no account-manager role.') };
const badName = problem('The identity name is not valid.');
const noIdentity = problem('No identity with that name.');

export function agentIdentityPaths(): Record<string, unknown> {
  return {
    '/vendor/agent-identities': {
      get: {
        operationId: 'listAgentIdentities',
        summary: 'Every agent identity kept in the table, sorted by name (identities of `auth.identities` in the driver file are not listed).',
        responses: { '200': { description: 'The identities.', content: json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: ref('AgentIdentity') } } }) }, ...managersOnly },
      },
    },
    '/vendor/agent-identities/{name}': {
      get: {
        operationId: 'getAgentIdentity',
        summary: 'One agent identity.',
        parameters: [nameParam],
        responses: { '200': { description: 'The identity.', content: json(ref('AgentIdentity')) }, '400': badName, '404': noIdentity, ...managersOnly },
      },
      put: {
        operationId: 'putAgentIdentity',
        summary: 'Creates the identity, or replaces its allowances (open streams of its agents end within seconds and reconnect under the new ones). Omitted lists allow nothing.',
        parameters: [nameParam],
        requestBody: { required: true, content: json(ref('AgentIdentityAllowances')) },
        responses: {
          '200': { description: 'Changed.', content: json(ref('AgentIdentity')) },
          '201': { description: 'Created.', content: json(ref('AgentIdentity')) },
          '400': problem('Bad name or body, each problem by path; nothing is stored.'),
          '413': problem('Body larger than the limit.'),
          ...managersOnly,
        },
      },
      delete: {
        operationId: 'deleteAgentIdentity',
        summary: 'Deletes the identity and revokes all its tokens; its agents\' open streams end within seconds.',
        parameters: [nameParam],
        responses: { '200': { description: 'The identity as it was.', content: json(ref('AgentIdentity')) }, '400': badName, '404': noIdentity, ...managersOnly },
      },
    },
    '/vendor/agent-identities/{name}/tokens': {
      get: {
        operationId: 'listAgentTokens',
        summary: 'The identity\'s tokens: ids, times and expiry, never a token or its digest.',
        parameters: [nameParam],
        responses: {
          '200': { description: 'The tokens.', content: json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: ref('AgentToken') } } }) },
          '400': badName,
          '404': noIdentity,
          ...managersOnly,
        },
      },
      post: {
        operationId: 'issueAgentToken',
        summary: 'Issues a token for the identity. The answer is the only place the token is ever shown; several tokens may be valid at once, for rotation.',
        parameters: [nameParam],
        requestBody: {
          required: false,
          content: json({
            type: 'object',
            additionalProperties: false,
            properties: { expiresInSeconds: { type: 'integer', minimum: 60, maximum: MAX_TOKEN_LIFETIME_SECONDS, description: 'Lifetime; without it the token is valid until revoked.' } },
          }),
        },
        responses: {
          '201': { description: 'The new token, shown this once.', content: json(ref('IssuedAgentToken')) },
          '400': problem('Bad name or body; nothing is stored.'),
          '404': noIdentity,
          '413': problem('Body larger than the limit.'),
          ...managersOnly,
        },
      },
    },
    '/vendor/agent-identities/{name}/tokens/{tokenId}': {
      delete: {
        operationId: 'revokeAgentToken',
        summary: 'Revokes one token; streams opened with it end within seconds.',
        parameters: [nameParam, { name: 'tokenId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: {
          '200': { description: 'Revoked.', content: json({ type: 'object', required: ['identity', 'tokenId'], properties: { identity: { type: 'string' }, tokenId: { type: 'string' } } }) },
          '400': badName,
          '404': problem('No identity with that name, or it has no token with that id.'),
          ...managersOnly,
        },
      },
    },
  };
}

const patterns = (what: string) => ({ type: 'array', maxItems: 100, items: { type: 'string' }, description: `${what}: names or patterns where \`*\` stands for any run of characters.` });
const time = { type: 'string', format: 'date-time' };

export function agentIdentitySchemas(): Record<string, unknown> {
  const allowances = {
    zones: patterns('Zones its agents may serve'),
    unzoned: { type: 'boolean', description: 'Whether its agents may be sent accounts pinned to no zone.' },
    agentIds: patterns('Agent ids its agents may use'),
    staticAccounts: patterns('Static account names its agents may define'),
  };
  const token = {
    tokenId: { type: 'string' },
    createdAt: time,
    expiresAt: { ...time, description: 'Absent: valid until revoked.' },
    expired: { type: 'boolean' },
  };
  return {
    AgentIdentityAllowances: { type: 'object', additionalProperties: false, properties: allowances },
    AgentIdentity: {
      type: 'object',
      required: ['name', 'zones', 'unzoned', 'agentIds', 'staticAccounts', 'createdAt', 'updatedAt'],
      properties: { name: { type: 'string' }, ...allowances, createdAt: time, updatedAt: time },
    },
    AgentToken: { type: 'object', required: ['tokenId', 'createdAt', 'expired'], properties: token },
    IssuedAgentToken: {
      type: 'object',
      required: ['identity', 'tokenId', 'token', 'createdAt', 'expired'],
      properties: { identity: { type: 'string' }, ...token, token: { type: 'string', description: '`vat_<tokenId>_<secret>`: what the agent presents as `Authorization: Bearer <token>`. Shown only here.' } },
    },
  };
}
