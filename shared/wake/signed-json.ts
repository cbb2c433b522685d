/**
 * The body of a signed wake message (a reservation ask, a replica's answer), once its signature has
 * been checked: the value `schema` makes of it, or undefined when it is not JSON or not of that shape.
 */
import * as v from 'valibot';

export function signedJsonBody<S extends v.GenericSchema>(schema: S, body: string): v.InferOutput<S> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = v.safeParse(schema, json);
  return parsed.success ? parsed.output : undefined;
}
