/**
 * Fields the API's answers share, for the schemas of this folder that define each answer once: the
 * API serves its answers as they say, the OpenAPI document and the web console's types are taken from
 * them, and vendorctl reads the answers with them. Only valibot here: the console type-checks against it.
 */
import * as v from 'valibot';

/** A time as the API serves it: RFC 3339 in UTC. */
export const timestampSchema = v.pipe(v.string(), v.isoTimestamp());

export const integerSchema = v.pipe(v.number(), v.integer());

/** A page of a numbered list (`?page=&limit=`): its items, where it is and how many there are in all. */
export function numberedPageSchema<T extends v.GenericSchema>(item: T) {
  return v.object({ items: v.array(item), page: integerSchema, limit: integerSchema, total: integerSchema });
}
