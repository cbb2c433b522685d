/**
 * The API's operations as its OpenAPI document describes them (functions/openapi/document.test.ts checks that
 * the document and the app's routes agree), and which of them Hono's own router picks for a request.
 * Suites that must cover every route read the list from here, so routes added later are covered too.
 */
import type { Hono } from 'hono';

export type JsonSchema = Record<string, unknown>;

export interface ApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface ApiOperation {
  operationId: string;
  /** Upper case. */
  method: string;
  /** The document's template, `/vendor/accounts/{accountId}`. */
  path: string;
  /** Served without credentials (`security: []`). */
  open: boolean;
  /** Every status the document names for it. */
  statuses: ReadonlySet<number>;
  parameters: ApiParameter[];
  /** The request body's schema, with `$ref`s left for `resolveRef`. */
  body: JsonSchema | undefined;
}

interface OpenApiDoc {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, JsonSchema>; responses?: Record<string, unknown> };
}

interface OperationObject {
  operationId: string;
  security?: unknown[];
  parameters?: ApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses: Record<string, unknown>;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

export function apiOperations(document: Record<string, unknown>): ApiOperation[] {
  const doc = document as unknown as OpenApiDoc;
  const out: ApiOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        open: Array.isArray(op.security) && op.security.length === 0,
        statuses: new Set(Object.keys(op.responses).map(Number)),
        parameters: (op.parameters ?? []).map((p) => ({ ...p, required: p.required ?? p.in === 'path' })),
        body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return out;
}

/** `#/components/schemas/X` → that schema; anything else unchanged. */
export function resolveRef(document: Record<string, unknown>, schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const found = (document as unknown as OpenApiDoc).components.schemas[name];
  if (found === undefined) throw new Error(`unresolved ${ref}`);
  return resolveRef(document, found);
}

/** `/a/:b` and `/a/{c}` both become `/a/{}`. */
function templateKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:[^/]+/g, '{}').replace(/\{[^}]+\}/g, '{}')}`;
}

/**
 * The operation the app routes `request` to, by asking the app's router exactly as Hono dispatches
 * (its own path decoding, HEAD served by the GET route); undefined when no route matches, which the
 * app answers with 404 (or 401 to an unauthenticated caller).
 */
export function routedOperation(app: Pick<Hono, 'getPath' | 'router'>, operations: readonly ApiOperation[], request: Request): ApiOperation | undefined {
  const method = request.method === 'HEAD' ? 'GET' : request.method;
  const path = app.getPath(request, { env: undefined });
  const [handlers] = app.router.match(method, path) as unknown as [[[unknown, { method: string; path: string }], unknown][]];
  const routes = handlers.map(([[, route]]) => route).filter((r) => r.method !== 'ALL');
  const keys = new Set(routes.map((r) => templateKey(r.method, r.path)));
  return operations.find((op) => keys.has(templateKey(op.method, op.path)));
}
