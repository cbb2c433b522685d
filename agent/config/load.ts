import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from 'valibot';
import { unknownKeys } from '../../shared/config-report/keys.ts';
import { problemsFromIssues, type ConfigProblem, type ConfigWarning } from '../../shared/config-report/problems.ts';
import { readConfigText, readYaml } from '../../shared/config-report/yaml.ts';
import { agentConfigSchema, type AgentConfig } from './schema.ts';
import { secretReferenceProblems } from './references.ts';
import { isSecretPath } from './secret-paths.ts';
import { semanticWarnings } from './warnings.ts';

/** Guards against documents built to expand exponentially through aliases. */
const MAX_ALIAS_COUNT = 1000;

export const DEFAULT_CONFIG_PATHS = ['/opt/vendor/config/vendor-agent.yml', 'vendor-agent.yml'] as const;

export interface ConfigResult {
  /** The file the configuration came from. */
  source: string;
  /** Present exactly when `problems` is empty. */
  config: AgentConfig | undefined;
  problems: ConfigProblem[];
  warnings: ConfigWarning[];
}

/** A key with no value (`logging:`) means the same as a key left out. */
function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, dropNulls(v)]),
    );
  }
  return value;
}

export function parseConfig(text: string, source: string): ConfigResult {
  const read = readYaml(text, { merge: true, maxAliasCount: MAX_ALIAS_COUNT });
  if (read.problems !== undefined) return { source, config: undefined, problems: read.problems, warnings: [] };
  const raw = dropNulls(read.raw ?? {});
  const warnings = [...unknownKeys(agentConfigSchema, raw), ...semanticWarnings(raw)];
  const parsed = v.safeParse(agentConfigSchema, raw);
  const schemaProblems = parsed.success ? [] : problemsFromIssues(parsed.issues, isSecretPath);
  const reported = new Set(schemaProblems.map((p) => p.path));
  const problems = [...schemaProblems, ...secretReferenceProblems(raw).filter((p) => !reported.has(p.path))];
  if (!parsed.success || problems.length > 0) return { source, config: undefined, problems, warnings };
  return { source, config: parsed.output, problems: [], warnings };
}

export async function loadConfigFile(path: string): Promise<ConfigResult> {
  const read = await readConfigText(path);
  if (read.problem !== undefined) return { source: path, config: undefined, problems: [read.problem], warnings: [] };
  return parseConfig(read.text, path);
}

/**
 * The file to read: the one given with `--config`, else the first of the default places that exists,
 * else the first default place (so the report names where the file was looked for).
 */
export function resolveConfigPath(explicit: string | undefined, cwd = process.cwd(), exists = existsSync): string {
  if (explicit !== undefined) return resolve(cwd, explicit);
  const candidates = DEFAULT_CONFIG_PATHS.map((p) => resolve(cwd, p));
  return candidates.find((p) => exists(p)) ?? candidates[0]!;
}
