import { Hono, type MiddlewareHandler } from 'hono';
import { parseOrThrow } from '../../shared/accounts/validate.ts';
import { requireManager } from '../auth/access.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { jsonBody } from '../http.ts';
import { authenticatedRoute, json, managerOnly, pathParameter, problem } from '../openapi/describe.ts';
import { agentIdentity, agentIdentityList, agentTokenList, allowancesBody, identityNameParameterSchema, issuedAgentToken, revokedToken, tokenRequestBody } from './schemas.ts';
import {
  deleteIdentityView,
  getIdentityView,
  identityName,
  issueIdentityToken,
  listIdentityTokens,
  listIdentityViews,
  parseAllowances,
  putIdentityView,
  revokeIdentityToken,
  tokenRequestSchema,
  type IdentityDeps,
} from './service.ts';

const nameParameter = pathParameter('name', 'The identity name: letters, digits, `.`, `_`, `-`, starting and ending with a letter or digit.', identityNameParameterSchema);
const badName = problem('The identity name is not valid.');
const noIdentity = problem('No identity with that name.');
const tooLarge = problem('Body larger than the limit.');

const listAgentIdentitiesDescription = authenticatedRoute({
  operationId: 'listAgentIdentities',
  summary: 'Every agent identity kept in the table, sorted by name (identities of `auth.identities` in the driver file are not listed).',
  responses: { '200': { description: 'The identities.', content: json(agentIdentityList) }, ...managerOnly },
});

const getAgentIdentityDescription = authenticatedRoute({
  operationId: 'getAgentIdentity',
  summary: 'One agent identity.',
  parameters: [nameParameter],
  responses: { '200': { description: 'The identity.', content: json(agentIdentity) }, '400': badName, '404': noIdentity, ...managerOnly },
});

const putAgentIdentityDescription = authenticatedRoute({
  operationId: 'putAgentIdentity',
  summary: 'Creates the identity, or replaces its allowances (open streams of its agents end within seconds and reconnect under the new ones). Omitted lists allow nothing.',
  parameters: [nameParameter],
  requestBody: { required: true, content: json(allowancesBody) },
  responses: {
    '200': { description: 'Changed.', content: json(agentIdentity) },
    '201': { description: 'Created.', content: json(agentIdentity) },
    '400': problem('Bad name or body, each problem by path; nothing is stored.'),
    '413': tooLarge,
    ...managerOnly,
  },
});

const deleteAgentIdentityDescription = authenticatedRoute({
  operationId: 'deleteAgentIdentity',
  summary: "Deletes the identity and revokes all its tokens; its agents' open streams end within seconds.",
  parameters: [nameParameter],
  responses: { '200': { description: 'The identity as it was.', content: json(agentIdentity) }, '400': badName, '404': noIdentity, ...managerOnly },
});

const listAgentTokensDescription = authenticatedRoute({
  operationId: 'listAgentTokens',
  summary: "The identity's tokens: ids, times and expiry, never a token or its digest.",
  parameters: [nameParameter],
  responses: { '200': { description: 'The tokens.', content: json(agentTokenList) }, '400': badName, '404': noIdentity, ...managerOnly },
});

const issueAgentTokenDescription = authenticatedRoute({
  operationId: 'issueAgentToken',
  summary: 'Issues a token for the identity. The answer is the only place the token is ever shown; several tokens may be valid at once, for rotation.',
  parameters: [nameParameter],
  requestBody: { required: false, content: json(tokenRequestBody) },
  responses: {
    '201': { description: 'The new token, shown this once.', content: json(issuedAgentToken) },
    '400': problem('Bad name or body; nothing is stored.'),
    '404': noIdentity,
    '413': tooLarge,
    ...managerOnly,
  },
});

const revokeAgentTokenDescription = authenticatedRoute({
  operationId: 'revokeAgentToken',
  summary: 'Revokes one token; streams opened with it end within seconds.',
  parameters: [nameParameter, pathParameter('tokenId', 'The token id.')],
  responses: {
    '200': { description: 'Revoked.', content: json(revokedToken) },
    '400': badName,
    '404': problem('No identity with that name, or it has no token with that id.'),
    ...managerOnly,
  },
});

/**
 * `/vendor/agent-identities`: who agent credentials speak for, and their tokens. Account managers
 * only, on every route (checked before anything is read), since a token lets its holder serve accounts.
 */
export function agentIdentityRoutes(deps: IdentityDeps, bodyLimit: MiddlewareHandler): Hono<ApiEnv> {
  // On each route rather than on the prefix, so an unknown path below it is still 404.
  const manager = requireManager();
  return new Hono<ApiEnv>()
    .get('/', listAgentIdentitiesDescription, manager, async (c) => c.json(await listIdentityViews(deps)))
    .get('/:name', getAgentIdentityDescription, manager, async (c) => c.json(await getIdentityView(deps, identityName(c.req.param('name')))))
    .put('/:name', putAgentIdentityDescription, manager, bodyLimit, async (c) => {
      const name = identityName(c.req.param('name'));
      const { created, view } = await putIdentityView(deps, name, parseAllowances(await jsonBody(c, 'a JSON object of allowances')));
      deps.logger.info({ subject: c.get('caller').subject, identity: name }, created ? 'agent identity created' : 'agent identity changed');
      return c.json(view, created ? 201 : 200);
    })
    .delete('/:name', deleteAgentIdentityDescription, manager, async (c) => {
      const gone = await deleteIdentityView(deps, identityName(c.req.param('name')));
      deps.logger.info({ subject: c.get('caller').subject, identity: gone.name }, 'agent identity deleted, with all its tokens');
      return c.json(gone);
    })
    .post('/:name/tokens', issueAgentTokenDescription, manager, bodyLimit, async (c) => {
      const name = identityName(c.req.param('name'));
      // No body at all asks for a token without expiry.
      const body = (await c.req.text()).trim() === '' ? {} : await jsonBody(c, 'a JSON object, or no body');
      const issued = await issueIdentityToken(deps, name, parseOrThrow(tokenRequestSchema, body, 'the request body'));
      deps.logger.info({ subject: c.get('caller').subject, identity: name, tokenId: issued.tokenId, expiresAt: issued.expiresAt }, 'agent token issued');
      return c.json(issued, 201);
    })
    .get('/:name/tokens', listAgentTokensDescription, manager, async (c) => c.json(await listIdentityTokens(deps, identityName(c.req.param('name')))))
    .delete('/:name/tokens/:tokenId', revokeAgentTokenDescription, manager, async (c) => {
      const revoked = await revokeIdentityToken(deps, identityName(c.req.param('name')), c.req.param('tokenId'));
      deps.logger.info({ subject: c.get('caller').subject, ...revoked }, 'agent token revoked');
      return c.json(revoked);
    });
}
