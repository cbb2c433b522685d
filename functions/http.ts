import type { Context } from 'hono';
import { VendorError } from '../shared/errors.ts';
import { PROBLEM_CONTENT_TYPE, challengeFor, toProblem } from './problem.ts';

/** Answers with RFC 9457 problem details for the error (and the bearer challenge of a 401). */
export function problemResponse(c: Context, err: VendorError): Response {
  const problem = toProblem(err, c.req.path);
  const challenge = challengeFor(err.code, c.req.header('authorization') !== undefined);
  return c.body(JSON.stringify(problem), problem.status as 400, {
    'content-type': PROBLEM_CONTENT_TYPE,
    ...(challenge === undefined ? {} : { 'www-authenticate': challenge }),
  });
}

/** The request body as JSON; an empty or malformed body is `invalid_input`, never a crash. */
export async function jsonBody(c: Context, expected = 'a JSON array of account records'): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') {
    throw new VendorError('invalid_input', `the request body is empty; expected ${expected}`, {
      issues: [{ path: '', message: 'empty body' }],
    });
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
 * Reads integer query parameters: each at most once, digits only, within [1, max]. Unknown
 * parameters are refused too, so a misspelt `limt=10` does not silently return 100 items.
 */
export function integerQuery(
  c: Context,
  spec: Record<string, { default: number; max: number }>,
): Record<string, number> {
  const issues: { path: string; message: string }[] = [];
  const out: Record<string, number> = {};
  const given = c.req.queries();
  for (const name of Object.keys(given)) {
    if (!(name in spec)) issues.push({ path: name, message: `unknown query parameter; allowed: ${Object.keys(spec).join(', ')}` });
  }
  for (const [name, { default: fallback, max }] of Object.entries(spec)) {
    const values = given[name];
    if (values === undefined) {
      out[name] = fallback;
      continue;
    }
    const [raw] = values;
    if (values.length > 1) issues.push({ path: name, message: 'given more than once' });
    else if (raw === undefined || !POSITIVE_INTEGER.test(raw) || Number(raw) > max) {
      issues.push({ path: name, message: `must be an integer from 1 to ${max}` });
    } else out[name] = Number(raw);
  }
  if (issues.length > 0) {
    throw new VendorError('invalid_input', issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
  }
  return out;
}
