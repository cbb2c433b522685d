import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import {
  accountPageSchema,
  accountSchema,
  activationBatchSchema,
  registrationBatchSchema,
} from '../shared/accounts/schema.ts';
import { ERROR_CODES } from '../shared/errors.ts';
import { operationBodySchema } from '../shared/operations/request.ts';
import { VERSION } from '../shared/version.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE } from './accounts/routes.ts';
import { IDEMPOTENCY_HEADER, MAX_WAIT_SECONDS } from './operations/service.ts';
import { operationViewSchema } from './operations/view.ts';
import { accountNameParam, authResponses, json, problem, ref, unauthorized } from './openapi-parts.ts';
import { resourcePaths, resourceSchemas } from './resources/openapi.ts';
import { agentIdentityPaths, agentIdentitySchemas } from './agent-identities/openapi.ts';

function schemaOf(schema: v.GenericSchema, typeMode: 'input' | 'output'): Record<string, unknown> {
  // Checks valibot cannot express in JSON Schema (duplicate names, "not both spellings") are enforced
  // by the API and described in the operation text instead.
  const { $schema: _ignored, ...rest } = toJsonSchema(schema, { target: 'draft-2020-12', typeMode, errorMode: 'ignore' }) as Record<string, unknown>;
  return rest;
}

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'errors'],
  properties: {
    type: { type: 'string', description: '`urn:vendor-agent:problem:<code>`' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    code: { type: 'string', enum: [...ERROR_CODES] },
    errors: {
      type: 'array',
      description: 'Every bad element and field, by path such as `[2].zoneId`.',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    names: { type: 'array', items: { type: 'string' }, description: 'Names that are not driver-defined accounts (code `unknown_account`).' },
  },
};

const managerOnly = { '403': problem('The caller holds no account-manager role.') };

/** The OpenAPI 3.1 document of the management API, built from the same valibot schemas the API validates with. */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
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
    security: [{ bearerAuth: [] }],
    paths: {
      '/vendor/accounts': {
        get: {
          operationId: 'listAccounts',
          summary: 'The accounts the caller may read, static and dynamic, sorted by name ascending; `total` counts only those.',
          parameters: [
            { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 } },
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT } },
          ],
          responses: {
            '200': { description: 'One page; a page past the end has empty `items`.', content: json(ref('AccountPage')) },
            '400': problem('Bad `page` or `limit`, or an unknown query parameter.'),
            ...authResponses,
          },
        },
        post: {
          operationId: 'registerAccounts',
          summary: 'Registers driver-defined accounts for migration to agents (state INACTIVE). Re-POST updates.',
          requestBody: { required: true, content: json(ref('RegistrationBatch')) },
          responses: {
            '200': { description: 'The registered accounts, in request order.', content: json({ type: 'array', items: ref('Account') }) },
            '400': problem('Invalid body, duplicate names, or a name not defined in the driver service (nothing is written).'),
            '413': problem('Body larger than the limit (5 MiB by default; a batch of 1,000 records of the largest valid size fits).'),
            ...authResponses,
            ...managerOnly,
          },
        },
        patch: {
          operationId: 'activateAccounts',
          summary: 'Activates registered accounts (state ACTIVE); they are sent to the agents of their zone, or to all agents.',
          requestBody: { required: true, content: json(ref('ActivationBatch')) },
          responses: {
            '200': { description: 'The activated accounts, in request order.', content: json({ type: 'array', items: ref('Account') }) },
            '400': problem('Invalid body, `state` other than ACTIVE, or a name not defined in the driver service.'),
            '409': problem('An account is not registered or already ACTIVE, or no agent session is live in its zone.'),
            '413': problem('Body larger than the limit (5 MiB by default; a batch of 1,000 records of the largest valid size fits).'),
            ...authResponses,
            ...managerOnly,
          },
        },
      },
      '/vendor/accounts/{accountId}': {
        get: {
          operationId: 'getAccount',
          summary: 'One account by name.',
          parameters: [accountNameParam('accountId', 'The account name.')],
          responses: {
            '200': { description: 'The account.', content: json(ref('Account')) },
            '404': problem('No account with that name.'),
            ...authResponses,
            '403': problem('The account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role).'),
          },
        },
        delete: {
          operationId: 'removeAccount',
          summary: 'Removes a migrated account from its agents (docs/api.md#endpoints names this path parameter `accountName`).',
          parameters: [accountNameParam('accountId', 'The account name.')],
          responses: {
            '200': { description: 'The account after removal (no longer registered).', content: json(ref('Account')) },
            '400': problem('The name is not defined in the driver service.'),
            ...authResponses,
            ...managerOnly,
          },
        },
      },
      '/vendor/accounts/{accountId}/operations': {
        post: {
          operationId: 'submitOperation',
          summary: 'Queues a deployment operation on the account: deploy (server-side apply), delete, scale, patch, rollout restart or rollout undo (docs/operations.md).',
          parameters: [
            accountNameParam('accountId', 'The account name.'),
            {
              name: IDEMPOTENCY_HEADER,
              in: 'header',
              required: true,
              description: 'Unique per operation (1–255 visible ASCII characters); a retry sends it again unchanged. The same key with the same request answers the same operation; with another request, 409.',
              schema: { type: 'string', minLength: 1, maxLength: 255 },
            },
            {
              name: 'wait',
              in: 'query',
              description: 'After storing it, answer once the operation has finished (200), or after this many seconds (202): one request instead of POST and `GET ?wait`.',
              schema: { type: 'integer', minimum: 1, maximum: MAX_WAIT_SECONDS },
            },
          ],
          requestBody: { required: true, content: json(ref('OperationRequest')) },
          responses: {
            '200': {
              description: 'With `wait`: stored, and finished within the wait; the finished operation. `Location` names it.',
              headers: { Location: { schema: { type: 'string' }, description: '`/vendor/operations/{operationId}`' } },
              content: json(ref('Operation')),
            },
            '202': {
              description: 'Stored, QUEUED or already RUNNING on an agent (or, for a repeated key, the operation it stands for, with `Idempotent-Replayed: true`); with `wait`, not finished within it. `Location` names it.',
              headers: { Location: { schema: { type: 'string' }, description: '`/vendor/operations/{operationId}`' } },
              content: json(ref('Operation')),
            },
            '400': problem('Missing Idempotency-Key, bad `wait`, invalid body or manifests, or objects the account may not touch (namespaces, onlyNamespacedResources, unlisted CRDs), each by path; nothing is stored.'),
            '404': problem('No account with that name.'),
            '409': problem('The Idempotency-Key was used for a different request, or the account is not served by agents.'),
            '413': problem('Body over 1 MiB, or the operation too large to store.'),
            ...authResponses,
            '403': problem('The account has permissions and the caller holds none of its WRITE roles (nor an account-manager role).'),
          },
        },
      },
      '/vendor/operations/{operationId}': {
        get: {
          operationId: 'getOperation',
          summary: 'One operation: state, per-object outcomes with the API server\'s own messages, timestamps.',
          parameters: [
            { name: 'operationId', in: 'path', required: true, schema: { type: 'string' } },
            {
              name: 'wait',
              in: 'query',
              description: 'Answer once the operation has finished, or after this many seconds.',
              schema: { type: 'integer', minimum: 1, maximum: MAX_WAIT_SECONDS },
            },
          ],
          responses: {
            '200': { description: 'The operation.', content: json(ref('Operation')) },
            '400': problem('Bad `wait`.'),
            '404': problem('No operation with that id.'),
            ...authResponses,
            '403': problem("The operation's account has permissions and the caller holds none of its READ or WRITE roles (nor an account-manager role)."),
          },
        },
      },
      ...resourcePaths(),
      ...agentIdentityPaths(),
      '/openapi.json': { get: { operationId: 'openApi', summary: 'This document (no credentials needed).', security: [], responses: { '200': { description: 'OpenAPI 3.1.' } } } },
      '/healthz': {
        get: {
          operationId: 'health',
          summary: 'Healthy when the table answers (no credentials needed).',
          security: [],
          responses: { '200': { description: 'ok', content: json({ type: 'object', properties: { status: { const: 'ok' } } }) }, '503': problem('The table is not answering.') },
        },
      },
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A JWT signed by the configured OIDC issuer (`iss`, `aud`, `exp` and `nbf` checked; roles from the configured claim), or the local admin token outside production mode.',
        },
      },
      responses: { Unauthorized: unauthorized },
      schemas: {
        Account: schemaOf(accountSchema, 'output'),
        AccountPage: schemaOf(accountPageSchema, 'output'),
        RegistrationBatch: schemaOf(registrationBatchSchema, 'input'),
        ActivationBatch: schemaOf(activationBatchSchema, 'input'),
        OperationRequest: schemaOf(operationBodySchema, 'input'),
        Operation: schemaOf(operationViewSchema, 'output'),
        Problem: problemSchema,
        ...resourceSchemas(),
        ...agentIdentitySchemas(),
      },
    },
  };
}
