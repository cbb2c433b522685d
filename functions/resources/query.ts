/**
 * The query parameters of the resource endpoints: each known name at most once, unknown names
 * refused (so a misspelt `namespce=shop` does not silently return every namespace), every value
 * checked, and every problem reported together.
 */
import type { Context } from 'hono';
import * as v from 'valibot';
import { VendorError } from '../../shared/errors.ts';
import { queryValues } from '../http.ts';

export const DEFAULT_RESOURCE_LIMIT = 100;
export const MAX_RESOURCE_LIMIT = 1000;

const kind = v.pipe(
  v.string(),
  v.maxLength(316, 'is too long'),
  v.regex(/^[A-Za-z][A-Za-z0-9]*(\.[a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$/, 'must be a kind (`deployment`) or a kind and its group (`Deployment.apps`)'),
);
const namespace = v.pipe(v.string(), v.maxLength(63, 'is longer than 63 characters'), v.regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name (a DNS label)'));
const name = v.pipe(v.string(), v.nonEmpty('is empty'), v.maxLength(253, 'is longer than 253 characters'), v.regex(/^[^#/]+$/, 'must not contain # or /'));
const limit = v.pipe(
  v.string(),
  v.regex(/^[1-9][0-9]{0,5}$/, `must be an integer from 1 to ${MAX_RESOURCE_LIMIT}`),
  v.transform(Number),
  v.maxValue(MAX_RESOURCE_LIMIT, `must be an integer from 1 to ${MAX_RESOURCE_LIMIT}`),
);
const cursor = v.pipe(v.string(), v.maxLength(2048, 'is too long'), v.regex(/^[A-Za-z0-9_-]+$/, 'is not a cursor this API gave'));

export const resourceQuerySchema = v.object({
  kind: v.optional(kind),
  namespace: v.optional(namespace),
  name: v.optional(name),
  limit: v.optional(limit, String(DEFAULT_RESOURCE_LIMIT)),
  cursor: v.optional(cursor),
});

export const metricsQuerySchema = v.object({ namespace: v.optional(namespace) });

export const noQuerySchema = v.object({});

/** The query of `c` checked against `schema` (an object of optional parameters); every problem reported together. */
export function parseQuery<S extends v.ObjectSchema<v.ObjectEntries, undefined>>(c: Context, schema: S): v.InferOutput<S> {
  const { values, issues } = queryValues(c, Object.keys(schema.entries));
  const result = v.safeParse(schema, Object.fromEntries(values), { abortEarly: false });
  if (!result.success) for (const i of result.issues) issues.push({ path: v.getDotPath(i) ?? '', message: i.message });
  if (issues.length > 0 || !result.success) {
    throw new VendorError('invalid_input', issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
  }
  return result.output;
}
