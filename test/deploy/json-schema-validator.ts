/**
 * A JSON Schema validator for the chart's values.schema.json, independent of the code that writes the
 * schema: Ajv (draft 7, as the schema declares), as Helm itself checks values against the schema before
 * it renders anything. Errors are worded as "key.path: what is wrong", naming the key at fault.
 */
import { Ajv, type ErrorObject } from 'ajv';

function where(error: ErrorObject): string {
  const path = error.instancePath.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  return path.length === 0 ? '(root)' : path.join('.');
}

const quoted = (value: unknown) => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value));

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `'${String(params.missingProperty)}' is a required property`;
    case 'additionalProperties':
      return `Additional properties are not allowed ('${String(params.additionalProperty)}' was unexpected)`;
    case 'type':
      return `${quoted(error.data)} is not of type '${String(params.type)}'`;
    default:
      return error.message ?? error.keyword;
  }
}

/** The errors of each instance against the schema ("key.path: message"), none for a valid one. */
export function jsonSchemaErrors(schema: object, instances: unknown[]): string[][] {
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
  const validate = ajv.compile(schema);
  return instances.map((instance) => {
    if (validate(instance)) return [];
    return (validate.errors ?? []).map((e) => `${where(e)}: ${describe(e)}`).sort();
  });
}
