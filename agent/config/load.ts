import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as v from 'valibot';
import { parseDocument } from 'yaml';
import { agentConfigSchema, type AgentConfig } from './schema.ts';
import { problemsFromIssues, type ConfigProblem, type ConfigWarning } from './problems.ts';
import { secretReferenceProblems } from './references.ts';
import { semanticWarnings } from './warnings.ts';
import { unknownKeys } from './keys.ts';

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
  const doc = parseDocument(text, { merge: true, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const problems = doc.errors.map((e): ConfigProblem => {
      const pos = e.linePos?.[0];
      return {
        path: pos === undefined ? '(YAML)' : `line ${pos.line}, column ${pos.col}`,
        message: `expected valid YAML: ${e.message.split('\n')[0] ?? e.code}`,
      };
    });
    return { source, config: undefined, problems, warnings: [] };
  }
  let js: unknown;
  try {
    js = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch {
    // The only failure left after a clean parse: aliases that would expand without bound.
    return {
      source,
      config: undefined,
      problems: [{ path: '(YAML)', message: `expected a document whose aliases expand to at most ${MAX_ALIAS_COUNT} nodes` }],
      warnings: [],
    };
  }
  const raw = dropNulls(js ?? {});
  const warnings = [...unknownKeys(agentConfigSchema, raw), ...semanticWarnings(raw)];
  const parsed = v.safeParse(agentConfigSchema, raw);
  const schemaProblems = parsed.success ? [] : problemsFromIssues(parsed.issues);
  const reported = new Set(schemaProblems.map((p) => p.path));
  const problems = [...schemaProblems, ...secretReferenceProblems(raw).filter((p) => !reported.has(p.path))];
  if (!parsed.success || problems.length > 0) return { source, config: undefined, problems, warnings };
  return { source, config: parsed.output, problems: [], warnings };
}

export async function loadConfigFile(path: string): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    return { source: path, config: undefined, problems: [{ path: '(file)', message: `expected a readable file: ${reason}` }], warnings: [] };
  }
  return parseConfig(text, path);
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
