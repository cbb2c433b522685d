import type { Context } from 'hono';
import { VendorError, type Issue } from '../shared/errors.ts';
import { MAX_JSON_DEPTH, jsonTextTooDeep } from '../shared/json-depth.ts';
import { PROBLEM_CONTENT_TYPE, challengeFor, retryAfterSeconds, toProblem } from './problem.ts';

/** Answers with RFC 9457 problem details for the error (and the bearer challenge of a 401, the `Retry-After` of a 503). */
export function problemResponse(c: Context, err: VendorError): Response {
  const problem = toProblem(err, c.req.path);
  const challenge = challengeFor(err.code, c.req.header('authorization') !== undefined);
  const retryAfter = retryAfterSeconds(err);
  return c.body(JSON.stringify(problem), problem.status as 400, {
    'content-type': PROBLEM_CONTENT_TYPE,
    ...(challenge === undefined ? {} : { 'www-authenticate': challenge }),
    ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
  });
}

/**
 * The request body as JSON; an empty, malformed or too deeply nested body is `invalid_input`, never a
 * crash. The depth is checked on the text, before anything recursive sees the value (docs/api.md).
 */
export async function jsonBody(c: Context, expected = 'a JSON array of account records'): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') {
    throw new VendorError('invalid_input', `the request body is empty; expected ${expected}`, {
      issues: [{ path: '', message: 'empty body' }],
    });
  }
  if (jsonTextTooDeep(text)) {
    const message = `nested too deeply: at most ${MAX_JSON_DEPTH} levels of arrays and objects`;
    throw new VendorError('invalid_input', `the request body is ${message}`, { issues: [{ path: '', message }] });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    const message = `malformed JSON: ${(cause as Error).message}`;
    throw new VendorError('invalid_input', message, { issues: [{ path: '', message }], cause });
  }
}

const POSITIVE_INTEGER = /^[1-9][0-9]{0,15}$/;

/**
 * The query's parameters by name: each name of `known` given once, read with URLSearchParams into a
 * Map, so names such as `__proto__` or `constructor` are names like any other, never properties of an
 * object. Unknown names (so a misspelt `limt=10` does not silently return 100 items; an empty name
 * too) and names given more than once are problems.
 */
export function queryValues(c: Context, known: readonly string[]): { values: Map<string, string>; issues: Issue[] } {
  const issues: Issue[] = [];
  const given = new Map<string, string[]>();
  for (const [name, value] of new URL(c.req.url).searchParams) {
    const values = given.get(name);
    if (values === undefined) given.set(name, [value]);
    else values.push(value);
  }
  const values = new Map<string, string>();
  for (const [name, list] of given) {
    if (!known.includes(name)) issues.push({ path: name, message: `unknown query parameter; allowed: ${known.join(', ')}` });
    else if (list.length > 1) issues.push({ path: name, message: 'given more than once' });
    else values.set(name, list[0] as string);
  }
  return { values, issues };
}

/** Integer query parameters by name: each from 1 to `max`, `default` when not given. */
export type IntegerQuery = Record<string, { default: number; max: number }>;

/** Reads integer query parameters (`queryValues`), each within [1, max]. */
export function integerQuery(c: Context, spec: IntegerQuery): Record<string, number> {
  const out: Record<string, number> = {};
  const { values, issues } = queryValues(c, Object.keys(spec));
  for (const [name, { default: fallback, max }] of Object.entries(spec)) {
    const raw = values.get(name);
    if (raw === undefined) {
      if (!issues.some((i) => i.path === name)) out[name] = fallback;
      continue;
    }
    if (!POSITIVE_INTEGER.test(raw) || Number(raw) > max) issues.push({ path: name, message: `must be an integer from 1 to ${max}` });
    else out[name] = Number(raw);
  }
  if (issues.length > 0) {
    throw new VendorError('invalid_input', issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
  }
  return out;
}
