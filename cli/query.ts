/**
 * Query strings from flags, and the lists the API serves in numbered pages. Filter flags are passed
 * through unchecked, so that the API's own 400 names a bad value (docs/cli.md#exit-codes).
 */
import * as v from 'valibot';
import { numberedPageSchema } from '../shared/answers/fields.ts';
import type { Flags, OptionName } from './args.ts';
import { expectShape, type ApiClient } from './client.ts';

/** `?a=1&b=2` of the given flags (mapped to parameter names) and the fixed parameters, or '' when there are none. */
export function queryOf(flags: Flags, parameters: Partial<Record<OptionName, string>>, fixed: Record<string, string> = {}): string {
  const query = new URLSearchParams(fixed);
  for (const [flag, parameter] of Object.entries(parameters)) {
    const value = flags[flag as OptionName];
    if (typeof value === 'string') query.set(parameter, value);
  }
  const text = query.toString();
  return text === '' ? '' : `?${text}`;
}

/** The pages' shape; their items are each list's own, read by the caller. */
const pageSchema = numberedPageSchema(v.unknown());

/** Every item of a list served as `{ items, page, limit, total }`, page after page, as the API sent them. */
export async function everyNumberedPage(api: ApiClient, pathOfPage: (page: number) => string, what: string): Promise<unknown[]> {
  const items: unknown[] = [];
  for (let page = 1; ; page++) {
    const got = expectShape(pageSchema, (await api.call('GET', pathOfPage(page))).body, what);
    items.push(...got.items);
    if (got.items.length === 0 || items.length >= got.total) return items;
  }
}
