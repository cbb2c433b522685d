/**
 * The management API as `vendorctl` calls it (docs/api.md): JSON in and out, the bearer token on
 * every request, and any answer that is not a success turned into a VendorError carrying the
 * problem's title, detail and field errors. The token never appears in a message.
 */
import * as v from 'valibot';
import { ERROR_CODES, VendorError, type ErrorCode } from '../shared/errors.ts';

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export interface ApiClient {
  readonly server: string;
  call(method: string, path: string, options?: { body?: unknown; headers?: Record<string, string> }): Promise<ApiAnswer>;
}

const problemSchema = v.looseObject({
  title: v.optional(v.string()),
  status: v.optional(v.number()),
  detail: v.optional(v.string()),
  code: v.optional(v.string()),
  errors: v.optional(v.array(v.object({ path: v.string(), message: v.string() }))),
  names: v.optional(v.array(v.string())),
  operationId: v.optional(v.string()),
});

function errorCode(code: string | undefined): ErrorCode {
  return ERROR_CODES.find((c) => c === code) ?? 'internal';
}

/** The problem+json of a failed request as an error; an answer that is not one is told by its status alone. */
export function problemError(status: number, body: unknown): VendorError {
  const parsed = v.safeParse(problemSchema, body);
  const problem = parsed.success ? parsed.output : {};
  const headline = [problem.title ?? `HTTP ${status}`, problem.detail].filter((s) => s !== undefined && s !== '').join(': ');
  return new VendorError(errorCode(problem.code), `${headline} (${status}${problem.code === undefined ? '' : ` ${problem.code}`})`, {
    issues: problem.errors ?? [],
    details: { status, ...(problem.names === undefined ? {} : { names: problem.names }), ...(problem.operationId === undefined ? {} : { operationId: problem.operationId }) },
  });
}

export function createClient(server: string, token: string | undefined, fetchImpl: typeof fetch = fetch): ApiClient {
  const base = server.replace(/\/+$/, '');
  return {
    server: base,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      let res: Response;
      try {
        res = await fetchImpl(`${base}${path}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
      } catch (e) {
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        throw new VendorError('unavailable', `cannot reach the API at ${base}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
      }
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        // Not JSON (a proxy's error page): kept as text, told by its status below.
      }
      if (res.status >= 400) throw problemError(res.status, body);
      return { status: res.status, body };
    },
  };
}

/** Checks an answer against the shape the command relies on (the API is a boundary too). */
export function expectShape<TSchema extends v.GenericSchema>(schema: TSchema, body: unknown, what: string): v.InferOutput<TSchema> {
  const parsed = v.safeParse(schema, body);
  if (parsed.success) return parsed.output;
  throw new VendorError('internal', `unexpected answer from the API for ${what}: ${parsed.issues[0]?.message ?? 'wrong shape'}`);
}
