import { Hono, type MiddlewareHandler } from 'hono';
import { parseOrThrow } from '../../shared/accounts/validate.ts';
import { requireManager } from '../auth/access.ts';
import type { ApiEnv } from '../auth/caller.ts';
import { jsonBody } from '../http.ts';
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

/**
 * `/vendor/agent-identities`: who agent credentials speak for, and their tokens. Account managers
 * only, on every route (checked before anything is read), since a token lets its holder serve accounts.
 */
export function agentIdentityRoutes(deps: IdentityDeps, bodyLimit: MiddlewareHandler): Hono<ApiEnv> {
  // On each route rather than on the prefix, so an unknown path below it is still 404.
  const manager = requireManager();
  return new Hono<ApiEnv>()
    .get('/', manager, async (c) => c.json(await listIdentityViews(deps)))
    .get('/:name', manager, async (c) => c.json(await getIdentityView(deps, identityName(c.req.param('name')))))
    .put('/:name', manager, bodyLimit, async (c) => {
      const name = identityName(c.req.param('name'));
      const { created, view } = await putIdentityView(deps, name, parseAllowances(await jsonBody(c, 'a JSON object of allowances')));
      deps.logger.info({ subject: c.get('caller').subject, identity: name }, created ? 'agent identity created' : 'agent identity changed');
      return c.json(view, created ? 201 : 200);
    })
    .delete('/:name', manager, async (c) => {
      const gone = await deleteIdentityView(deps, identityName(c.req.param('name')));
      deps.logger.info({ subject: c.get('caller').subject, identity: gone.name }, 'agent identity deleted, with all its tokens');
      return c.json(gone);
    })
    .post('/:name/tokens', manager, bodyLimit, async (c) => {
      const name = identityName(c.req.param('name'));
      // No body at all asks for a token without expiry.
      const body = (await c.req.text()).trim() === '' ? {} : await jsonBody(c, 'a JSON object, or no body');
      const issued = await issueIdentityToken(deps, name, parseOrThrow(tokenRequestSchema, body, 'the request body'));
      deps.logger.info({ subject: c.get('caller').subject, identity: name, tokenId: issued.tokenId, expiresAt: issued.expiresAt }, 'agent token issued');
      return c.json(issued, 201);
    })
    .get('/:name/tokens', manager, async (c) => c.json(await listIdentityTokens(deps, identityName(c.req.param('name')))))
    .delete('/:name/tokens/:tokenId', manager, async (c) => {
      const revoked = await revokeIdentityToken(deps, identityName(c.req.param('name')), c.req.param('tokenId'));
      deps.logger.info({ subject: c.get('caller').subject, ...revoked }, 'agent token revoked');
      return c.json(revoked);
    });
}
