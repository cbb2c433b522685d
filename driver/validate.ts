/**
 * `vendor-driver validate`: checks a `vendor-driver.yml` as the driver reads it at start, and reports
 * every problem at its key path, as the agent's `validate` does (values of secret keys shown only by
 * their kind, refused keys with the closest known key).
 */
import * as v from 'valibot';
import { duplicateNameIssues } from '../shared/accounts/duplicates.ts';
import { refusedKeyProblem } from '../shared/config-report/keys.ts';
import { problemsFromIssues, type ConfigProblem } from '../shared/config-report/problems.ts';
import type { CheckedConfig } from '../shared/config-report/report.ts';
import { readConfigText, readYaml } from '../shared/config-report/yaml.ts';
import { isVendorError } from '../shared/errors.ts';
import { driverFileSchema, endpointConfig, type DriverFile } from './config.ts';

/** The aliases the driver's reading of the file expands at most (the YAML library's own default). */
const MAX_ALIAS_COUNT = 100;

/** Keys whose values are tokens or passwords; any key naming one is treated the same, to be safe. */
const SECRET_KEY_PATHS: readonly RegExp[] = [
  /^api\.auth\.adminToken$/,
  /^auth\.tokens(\[\d+\])?$/,
  /^auth\.identities\[\d+\]\.tokens(\[\d+\])?$/,
  /^grpc\.tls\.keyFilePassword$/,
  /token|password|secret/i,
];

export function isDriverSecretPath(path: string): boolean {
  return SECRET_KEY_PATHS.some((re) => re.test(path));
}

/** valibot's own wording (`Invalid type: Expected number but received "x"`) in the report's: the found value follows anyway. */
function plainMessage(message: string): string {
  const match = /^Invalid \w+: Expected (.+) but received .+$/s.exec(message);
  return match === null ? message : `expected ${match[1]}`;
}

export interface CheckedDriverFile extends CheckedConfig {
  config: DriverFile | undefined;
}

export function checkDriverText(text: string, source: string): CheckedDriverFile {
  const invalid = (problems: ConfigProblem[]): CheckedDriverFile => ({ source, config: undefined, problems, warnings: [] });
  const read = readYaml(text, { merge: false, maxAliasCount: MAX_ALIAS_COUNT });
  if (read.problems !== undefined) return invalid(read.problems);
  const parsed = v.safeParse(driverFileSchema, read.raw ?? {}, { abortEarly: false });
  if (!parsed.success) {
    const problems = problemsFromIssues(parsed.issues, isDriverSecretPath, refusedKeyProblem(driverFileSchema));
    return invalid(problems.map((p) => ({ ...p, message: plainMessage(p.message) })));
  }
  const duplicates = duplicateNameIssues(parsed.output.kubernetes.accounts, 'kubernetes.accounts');
  if (duplicates.length > 0) return invalid(duplicates);
  try {
    // The endpoint settings are checked once more at start; a file that passes above passes here too.
    endpointConfig(parsed.output);
  } catch (e) {
    if (!isVendorError(e)) throw e;
    return invalid(e.issues.map((i) => ({ path: i.path || '(top of the file)', message: i.message })));
  }
  return { source, config: parsed.output, problems: [], warnings: [] };
}

export async function checkDriverFile(path: string): Promise<CheckedDriverFile> {
  const read = await readConfigText(path);
  if (read.problem !== undefined) return { source: path, config: undefined, problems: [read.problem], warnings: [] };
  return checkDriverText(read.text, path);
}
