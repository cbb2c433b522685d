/**
 * A JSON Schema validator for the chart's values.schema.json, independent of the code that writes the
 * schema: Python's `jsonschema` package (draft 7, as the schema declares), which the project's machine
 * image carries. When this machine lacks it, `availability.reason` says why and the tests that need it
 * report that instead of running.
 */
import { spawnSync } from 'node:child_process';

const PYTHON = process.env.VENDOR_PYTHON || 'python3';

const CHECK = `
import json, sys
import jsonschema
request = json.load(sys.stdin)
validator = jsonschema.Draft7Validator(request["schema"])
jsonschema.Draft7Validator.check_schema(request["schema"])
def where(error):
    return ".".join(str(p) for p in error.absolute_path) or "(root)"
print(json.dumps([sorted(f"{where(e)}: {e.message}" for e in validator.iter_errors(i)) for i in request["instances"]]))
`;

export type ValidatorAvailability = { available: true; version: string } | { available: false; reason: string };

export function jsonSchemaValidatorAvailability(): ValidatorAvailability {
  const result = spawnSync(PYTHON, ['-c', 'import importlib.metadata as m; print(m.version("jsonschema"))'], { encoding: 'utf8', timeout: 30_000 });
  if (result.error !== undefined) {
    const code = (result.error as NodeJS.ErrnoException).code;
    return { available: false, reason: code === 'ENOENT' ? `${PYTHON} is not installed` : `${PYTHON} cannot run: ${result.error.message}` };
  }
  if (result.status !== 0) return { available: false, reason: `${PYTHON} has no jsonschema package: ${result.stderr.trim().split('\n').at(-1)}` };
  return { available: true, version: result.stdout.trim() };
}

/** The errors of each instance against the schema ("key.path: message"), none for a valid one. */
export function jsonSchemaErrors(schema: unknown, instances: unknown[]): string[][] {
  const result = spawnSync(PYTHON, ['-c', CHECK], { input: JSON.stringify({ schema, instances }), encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`jsonschema failed: ${result.stderr || result.error?.message}`);
  return JSON.parse(result.stdout) as string[][];
}
