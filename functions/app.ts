import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { VendorError } from '../shared/errors.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import { silentLogger, type Logger } from '../shared/log.ts';
import type { OperationEvents } from '../shared/operations/events.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import { getRankDirParams } from '../shared/table/accounts/rank.ts';
import { accountRoutes, accountSummaryRoutes } from './accounts/routes.ts';
import { operationRoutes } from './operations/routes.ts';
import { resourceRoutes } from './resources/routes.ts';
import { agentIdentityRoutes } from './agent-identities/routes.ts';
import { agentRoutes } from './agents/routes.ts';
import { IgnoredPermissionsLog } from './auth/access.ts';
import type { ApiAuth } from './auth/authenticator.ts';
import type { ApiEnv } from './auth/caller.ts';
import { authentication } from './auth/middleware.ts';
import { problemResponse } from './http.ts';
import { inline, json, openRoute, problem } from './openapi/describe.ts';
import { openApiRoute } from './openapi/document.ts';
import { toVendorError } from './problem.ts';
import { corsFor, securityHeaders } from './security.ts';
import { callerRoutes } from './console/caller-routes.ts';
import { consolePages, consolePolicy } from './console/pages.ts';
import type { ConsoleOptions } from './console/settings.ts';
import type { WakeSender } from './wake/sender.ts';

export interface AppDeps {
  table: TableRef;
  /** Authentication of callers (functions/auth/authenticator.ts `createApiAuth`); there is no API without it. */
  auth: ApiAuth;
  clock?: Clock;
  logger?: Logger;
  /** Largest accepted body of the account routes (POST, PATCH); larger ones get 413. */
  maxBodyBytes?: number;
  /** Largest accepted body of an operation request; larger ones get 413. */
  maxOperationBodyBytes?: number;
  /** Operation news shared with a driver in the same process (`npm start`). */
  operationEvents?: OperationEvents;
  /** Wakes driver replicas in other processes when work for them is written (docs/protocol.md#6b-wakes). */
  wakes?: WakeSender;
  /** Browser origins allowed to call the API (CORS); none, so CORS is off, when absent. */
  corsOrigins?: readonly string[];
  /** The web console under `/ui` (docs/console.md): its settings, extra `connect-src` origins, where its build is. */
  console?: ConsoleOptions;
}

/** Room for a full batch (1,000 records) of the largest valid records (about 4.7 KB each), under the 6 MB a Lambda request may carry. */
export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;

/** An operation request's body (docs/operations.md, "Limits"): its stored, compressed form must fit in 350 KB anyway. */
export const DEFAULT_MAX_OPERATION_BODY_BYTES = 1024 * 1024;

/** Paths served without authentication: health checks and the API description. */
export const OPEN_PATHS = ['/healthz', '/openapi.json'] as const;

const openApiDescription = openRoute({
  operationId: 'openApi',
  summary: 'This document (no credentials needed).',
  responses: { '200': { description: 'OpenAPI 3.1.' } },
});

const healthDescription = openRoute({
  operationId: 'health',
  summary: 'Healthy when the table answers (no credentials needed).',
  responses: {
    '200': { description: 'ok', content: json(inline({ type: 'object', properties: { status: { const: 'ok' } } })) },
    '503': problem('The table is not answering.'),
  },
});

/** The management API. The same app runs behind `hono/aws-lambda` and `@hono/node-server`. */
export function createApp(deps: AppDeps): Hono<ApiEnv> {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger ?? silentLogger();
  const app = new Hono<ApiEnv>();

  // Only on methods that carry a body: touching the body of a GET makes the Node adapter build a full
  // Request with a stream, which costs more than the whole table read.
  const limitOf = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: (c) => problemResponse(c, new VendorError('payload_too_large', `the request body is larger than ${maxSize} bytes`)),
    });
  const limit = limitOf(deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const operationLimit = limitOf(deps.maxOperationBodyBytes ?? DEFAULT_MAX_OPERATION_BODY_BYTES);

  app.onError((err, c) => {
    const vendorError = toVendorError(err);
    if (vendorError.code === 'internal' || vendorError.code === 'unavailable') {
      logger.error({ err, method: c.req.method, path: c.req.path }, 'request failed');
    }
    return problemResponse(c, vendorError);
  });
  app.notFound((c) => problemResponse(c, new VendorError('not_found', `no route for ${c.req.method} ${c.req.path}`)));

  app.use('*', securityHeaders(consolePolicy(deps.console)));
  const cors = corsFor(deps.corsOrigins ?? []);
  if (cors !== undefined) app.use('*', cors);
  // The console's pages hold no data: they are served before authentication, and ask the API for everything.
  app.use('*', consolePages(deps.console));
  app.use('*', authentication(deps.auth, OPEN_PATHS));
  const permissionsLog = new IgnoredPermissionsLog(logger);
  app.route('/vendor/accounts', accountRoutes({ table: deps.table, clock, permissionsLog, wakes: deps.wakes }, limit));
  app.route('/vendor/account-summary', accountSummaryRoutes({ table: deps.table, clock, permissionsLog }));
  app.route('/vendor/accounts', resourceRoutes({ table: deps.table, clock, permissionsLog }));
  app.route('/vendor/agent-identities', agentIdentityRoutes({ table: deps.table, clock, logger }, limit));
  app.route('/vendor/agents', agentRoutes({ table: deps.table, clock }));
  app.route('/vendor/caller', callerRoutes({ table: deps.table }));
  app.route('/vendor', operationRoutes({ table: deps.table, clock, events: deps.operationEvents, permissionsLog, wakes: deps.wakes }, operationLimit));
  app.get('/openapi.json', openApiDescription, openApiRoute(app));
  // Healthy means the table answers: one small read of the rank directory.
  app.get('/healthz', healthDescription, async (c) => {
    await deps.table.client.send(new GetCommand(getRankDirParams(deps.table.tableName, false)));
    return c.json({ status: 'ok' });
  });
  return app;
}
