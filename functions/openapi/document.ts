/**
 * The OpenAPI 3.1 document of the management API, generated from the descriptions its routes carry
 * (describe.ts): only what belongs to the whole API is written here.
 */
import type { Hono, Handler } from 'hono';
import { generateSpecs } from 'hono-openapi';
import type { ApiEnv } from '../auth/caller.ts';
import { BEARER_SCHEME, problemSchema, unauthorizedResponse } from './describe.ts';
import { VERSION } from '../../shared/version.ts';

const documentation = {
  info: {
    title: 'vendor-agent account management API',
    version: VERSION,
    description: [
      'Lists, registers, activates and removes the Kubernetes accounts served by agents. Errors are RFC 9457 problem details.',
      'Every operation but the health check and this document needs `Authorization: Bearer <token>`: a JWT from the configured OIDC issuer,',
      'or, for local use only, the configured admin token. Registering, activating and removing accounts need an account-manager role;',
      "reading an account needs one of its READ or WRITE roles when it has permissions (docs/api.md#authorization), and the list shows only the accounts the caller may read.",
    ].join(' '),
  },
  security: [{ [BEARER_SCHEME]: [] }],
  components: {
    securitySchemes: {
      [BEARER_SCHEME]: {
        type: 'http' as const,
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'A JWT signed by the configured OIDC issuer (`iss`, `aud`, `exp` and `nbf` checked; roles from the configured claim), or the local admin token outside production mode.',
      },
    },
    responses: { Unauthorized: unauthorizedResponse },
    schemas: { ...problemSchema.components },
  },
};

/** The document of `app`, from the descriptions of its routes. */
export async function openApiDocument(app: Hono<ApiEnv>): Promise<Record<string, unknown>> {
  const document = await generateSpecs(app, {
    documentation,
    // Served as a path like any other, `/openapi.json` included.
    excludeStaticFile: false,
    // Each route names its own 400, with problem details.
    defaultValidationErrorResponse: false,
  });
  return JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
}

/** Serves the document of `app`, generated once, on the first request. */
export function openApiRoute(app: Hono<ApiEnv>): Handler<ApiEnv> {
  let document: Promise<Record<string, unknown>> | undefined;
  return async (c) => {
    // A failed generation is not kept: the next request tries again.
    document ??= openApiDocument(app).catch((err: unknown) => {
      document = undefined;
      throw err;
    });
    return c.json(await document);
  };
}
