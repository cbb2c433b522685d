/**
 * What a route says about itself in the OpenAPI document (docs/api.md#the-openapi-document). Each
 * route passes its description to `authenticatedRoute` or `openRoute` beside its handler, and the document is
 * generated from the routes (document.ts), so no route is served without one.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type { MiddlewareHandler } from 'hono';
import { describeRoute, type DescribeRouteOptions, type ResolverReturnType, type ResponsesWithResolver } from 'hono-openapi';
import type * as v from 'valibot';
import { ERROR_CODES } from '../../shared/errors.ts';
import type { IntegerQuery } from '../http.ts';
import { PROBLEM_CONTENT_TYPE } from '../problem.ts';

export type JsonSchema = Record<string, unknown>;

/** A schema as the document gives it, with the named schemas (`components.schemas`) it refers to. */
export interface DescribedSchema {
  readonly schema: JsonSchema;
  readonly components: Readonly<Record<string, JsonSchema>>;
}

/**
 * The JSON Schema of a valibot schema the API validates or serves with. Where it holds one of the
 * schemas of `refs`, it refers to it as `#/components/schemas/<name>` (give the named schema with
 * `named(..., uses)`) instead of writing it out again.
 */
export function jsonSchemaOf(schema: v.GenericSchema, typeMode: 'input' | 'output', refs: Record<string, v.GenericSchema> = {}): JsonSchema {
  // Checks valibot cannot express in JSON Schema (duplicate names, "not both spellings") are enforced
  // by the API and described in the operation text instead.
  const { $schema: _ignored, $defs: _defs, ...rest } = toJsonSchema(schema, {
    target: 'draft-2020-12',
    typeMode,
    errorMode: 'ignore',
    definitions: refs,
    overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  }) as JsonSchema;
  return rest;
}

/** `schema` in place, with the named schemas it refers to through `uses`. */
export function inline(schema: JsonSchema, ...uses: DescribedSchema[]): DescribedSchema {
  return { schema, components: Object.assign({}, ...uses.map((u) => u.components)) as Record<string, JsonSchema> };
}

/** `schema` as `#/components/schemas/<name>`, referred to wherever it is used. */
export function named(name: string, schema: JsonSchema, ...uses: DescribedSchema[]): DescribedSchema {
  const used = inline(schema, ...uses).components;
  return { schema: { $ref: `#/components/schemas/${name}` }, components: { ...used, [name]: schema } };
}

export const arrayOf = (items: DescribedSchema): DescribedSchema => inline({ type: 'array', items: items.schema }, items);

/** `schema` with a description on each of the given properties. */
export function describedProperties(schema: JsonSchema, descriptions: Record<string, string>): JsonSchema {
  const properties = { ...(schema.properties as Record<string, JsonSchema>) };
  for (const [name, description] of Object.entries(descriptions)) properties[name] = { ...properties[name], description };
  return { ...schema, properties };
}

type SchemaObject = Awaited<ReturnType<ResolverReturnType['toOpenAPISchema']>>['schema'];
type JsonSchema7 = Awaited<ReturnType<ResolverReturnType['toJSONSchema']>>;
type Parameter = NonNullable<DescribeRouteOptions['parameters']>[number];
type ParameterSchema = NonNullable<Extract<Parameter, { in: string }>['schema']>;

/** The form hono-openapi takes a schema in and registers its named schemas from. */
function asResolver({ schema, components }: DescribedSchema): ResolverReturnType {
  return {
    vendor: 'vendor-agent',
    // Only describes: each route validates its input itself, so that errors are problem details
    // naming every bad field (docs/api.md#errors).
    validate: () => ({ issues: [{ message: 'a description, not a validator' }] }),
    toJSONSchema: () => schema as JsonSchema7,
    toOpenAPISchema: async () => ({ schema: schema as SchemaObject, components: { schemas: { ...components } as Record<string, SchemaObject> } }),
  };
}

export const json = (schema: DescribedSchema) => ({ 'application/json': { schema: asResolver(schema) } });

export const problemSchema = named('Problem', {
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
});

const problemContent = { [PROBLEM_CONTENT_TYPE]: { schema: asResolver(problemSchema) } };

/** An answer with problem details (docs/api.md#errors). */
export const problem = (description: string) => ({ description, content: problemContent });

/** The answer to missing or bad credentials, `#/components/responses/Unauthorized`. */
export const unauthorizedResponse = {
  description: 'Missing or invalid credentials: the same answer whatever was wrong.',
  headers: { 'WWW-Authenticate': { schema: { type: 'string' as const }, description: '`Bearer realm="vendor-agent"`, with `error="invalid_token"` when a token was sent.' } },
  content: problemContent,
};

export const BEARER_SCHEME = 'bearerAuth';

/** What every route behind authentication (functions/auth/middleware.ts) may answer besides its own. */
const authResponses = {
  '401': { $ref: '#/components/responses/Unauthorized' },
  '503': problem('The identity provider (to verify the token) or the table is not answering; try again.'),
};

export const managerOnly = { '403': problem('The caller holds no account-manager role.') };

export interface RouteDescription extends Omit<DescribeRouteOptions, 'operationId' | 'summary' | 'security' | 'responses' | 'hide'> {
  operationId: string;
  summary: string;
  responses: ResponsesWithResolver;
}

/** Describes a route that needs a bearer token: its own answers, and those of authentication (401, 503). */
export function authenticatedRoute(route: RouteDescription): MiddlewareHandler {
  return describeRoute({ ...route, security: [{ [BEARER_SCHEME]: [] }], responses: { ...route.responses, ...authResponses } });
}

/** Describes a route served without credentials (`OPEN_PATHS` of functions/app.ts). */
export function openRoute(route: RouteDescription): MiddlewareHandler {
  return describeRoute({ ...route, security: [] });
}

export const pathParameter = (name: string, description: string, schema: JsonSchema = { type: 'string' }): Parameter => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: schema as ParameterSchema,
});

export const accountParameter = pathParameter('accountId', 'The account name.');

/** The query parameters `integerQuery` (functions/http.ts) reads with `query`. */
export function integerQueryParameters(query: IntegerQuery, descriptions: Record<string, string> = {}): Parameter[] {
  return Object.entries(query).map(([name, { default: fallback, max }]) => ({
    name,
    in: 'query',
    ...(descriptions[name] === undefined ? {} : { description: descriptions[name] }),
    // A default below 1 stands for "not given" (no wait), not for a value a caller may send.
    schema: { type: 'integer' as const, minimum: 1, maximum: max, ...(fallback >= 1 ? { default: fallback } : {}) },
  }));
}

/** The query parameters a valibot object schema checks, each with an optional description or a schema that says more. */
export function queryParameters(query: v.GenericSchema, refine: Record<string, { description?: string; schema?: JsonSchema }> = {}): Parameter[] {
  const { properties = {}, required = [] } = jsonSchemaOf(query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    in: 'query',
    ...(required.includes(name) ? { required: true } : {}),
    ...(refine[name]?.description === undefined ? {} : { description: refine[name].description }),
    schema: (refine[name]?.schema ?? schema) as ParameterSchema,
  }));
}
