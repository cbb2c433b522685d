import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { yamlValue } from '../yaml-value.ts';
import type { ConfigProblem } from './problems.ts';

export interface YamlOptions {
  /** Whether `<<` merge keys are read. */
  merge: boolean;
  /** Guards against documents built to expand exponentially through aliases. */
  maxAliasCount: number;
}

/** A file's YAML as plain values, or what keeps it from being read: each syntax error with its line and column. */
export type YamlRead = { raw: unknown; problems?: undefined } | { raw?: undefined; problems: ConfigProblem[] };

export function readYaml(text: string, options: YamlOptions): YamlRead {
  const doc = parseDocument(text, { merge: options.merge, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    // Only the first line of each error: the code frame after it would quote the file, which may hold a secret.
    const problems = doc.errors.map((e): ConfigProblem => {
      const pos = e.linePos?.[0];
      return {
        path: pos === undefined ? '(YAML)' : `line ${pos.line}, column ${pos.col}`,
        message: `expected valid YAML: ${e.message.split('\n')[0] ?? e.code}`,
      };
    });
    return { problems };
  }
  const read = yamlValue(doc, options.maxAliasCount);
  return 'problem' in read ? { problems: [{ path: '(YAML)', message: `expected a document that can be read: ${read.problem}` }] } : { raw: read.value };
}

/** A configuration file's text, or the one problem of a file that cannot be read. */
export async function readConfigText(path: string): Promise<{ text: string; problem?: undefined } | { text?: undefined; problem: ConfigProblem }> {
  try {
    return { text: await readFile(path, 'utf8') };
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    return { problem: { path: '(file)', message: `expected a readable file: ${reason}` } };
  }
}
