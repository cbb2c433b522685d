import type { Context } from 'hono';
import * as v from 'valibot';
import { zoneIdSchema } from '../shared/accounts/schema.ts';
import { VendorError, type Issue } from '../shared/errors.ts';
import { queryValues, type IntegerQuery } from './http.ts';

const POSITIVE_INTEGER = /^[1-9][0-9]{0,15}$/;

/** Checks one text parameter: the value to use, or the problem with it. */
export type TextCheck<T> = (raw: string) => { value: T } | { problem: string };

/**
 * Reads a query of integer parameters (as `integerQuery`) and text parameters, each checked by its
 * own rule. Every bad, unknown or repeated parameter is named in one `invalid_input` answer; nothing
 * is read from the table before the whole query is good.
 */
export function filteredQuery<T extends Record<string, TextCheck<unknown>>>(
  c: Context,
  integers: IntegerQuery,
  texts: T,
): { integers: Record<string, number>; texts: { [K in keyof T]?: T[K] extends TextCheck<infer V> ? V : never } } {
  const { values, issues } = queryValues(c, [...Object.keys(integers), ...Object.keys(texts)]);
  const ints: Record<string, number> = {};
  for (const [name, { default: fallback, max }] of Object.entries(integers)) {
    const raw = values.get(name);
    if (raw === undefined) ints[name] = fallback;
    else if (!POSITIVE_INTEGER.test(raw) || Number(raw) > max) issues.push({ path: name, message: `must be an integer from 1 to ${max}` });
    else ints[name] = Number(raw);
  }
  const out: Record<string, unknown> = {};
  for (const [name, check] of Object.entries(texts)) {
    const raw = values.get(name);
    if (raw === undefined) continue;
    const result = check(raw);
    if ('problem' in result) issues.push({ path: name, message: result.problem });
    else out[name] = result.value;
  }
  throwIssues(issues);
  return { integers: ints, texts: out as { [K in keyof T]?: T[K] extends TextCheck<infer V> ? V : never } };
}

function throwIssues(issues: Issue[]): void {
  if (issues.length === 0) return;
  throw new VendorError('invalid_input', issues.map((i) => `${i.path}: ${i.message}`).join('; '), { issues });
}

/** One or more values of `allowed`, separated by commas (`state=FAILED,INACTIVE`). */
export function oneOf<V extends string>(allowed: readonly V[]): TextCheck<ReadonlySet<V>> {
  return (raw) => {
    const parts = raw.split(',');
    const bad = parts.filter((p) => !(allowed as readonly string[]).includes(p));
    if (bad.length > 0 || raw === '') return { problem: `must be one or more of ${allowed.join(', ')}, separated by commas` };
    return { value: new Set(parts as V[]) };
  };
}

/** A zone id, as accounts and agents carry it. */
export const zoneCheck: TextCheck<string> = (raw) => {
  const result = v.safeParse(zoneIdSchema, raw);
  return result.success ? { value: result.output } : { problem: result.issues[0].message };
};
