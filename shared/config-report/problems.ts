/**
 * Problems and warnings of a configuration file, as `validate` of the agent and of the driver print
 * them: each at its key path, with the value found shown only when it cannot be a secret.
 */
import type * as v from 'valibot';
import { REFUSED_VALUE } from '../accounts/kubeconfig-reference.ts';

/** One thing wrong with the file: where, what was found (printable, never a secret) and what is allowed. */
export interface ConfigProblem {
  path: string;
  /** Starts with "expected ...". */
  message: string;
  /** The value found, rendered for a person; secret-bearing keys show only the kind of value. */
  value?: string;
}

/** Something accepted but worth a look: unknown keys, ignored permissions. */
export interface ConfigWarning {
  path: string;
  message: string;
}

export type PathKey = string | number;

/** `['kubernetes', 'accounts', 2, 'name']` -> `kubernetes.accounts[2].name`. */
export function formatPath(keys: readonly PathKey[]): string {
  let out = '';
  for (const key of keys) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out === '' ? '(top of the file)' : out;
}

/** Whether the value at a key path may be a secret (a token, a password), and so is shown only by its kind. */
export type SecretPath = (path: string) => boolean;

function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

/** A value shown only by its kind. */
export function hiddenValue(value: unknown): string {
  return `${kindOf(value)} (value hidden)`;
}

/** How a found value is shown in a report. */
export function renderValue(path: string, value: unknown, isSecret: SecretPath): string {
  if (value === undefined || value === null) return kindOf(value);
  if (isSecret(path)) return hiddenValue(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return kindOf(value);
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.length === 0 ? 'an empty mapping' : `a mapping with ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', ...' : ''}`;
  }
  return kindOf(value);
}

/**
 * A key a strict mapping refused, told as such: with the closest key the mapping knows when there is
 * one (`keys` leads to the mapping).
 */
export type UnknownKeyProblem = (keys: readonly PathKey[], key: string) => ConfigProblem;

/**
 * Turns valibot issues into problems, one per key path (the first issue found there, since a value
 * that fails its type makes every later rule on it moot). Without `unknownKey`, a refused key gets
 * the schema's own message.
 */
export function problemsFromIssues(
  issues: readonly v.BaseIssue<unknown>[],
  isSecret: SecretPath,
  unknownKey?: UnknownKeyProblem,
): ConfigProblem[] {
  const byPath = new Map<string, ConfigProblem>();
  for (const issue of issues) {
    const items = issue.path ?? [];
    const keys = items.map((item) => item.key as PathKey);
    const path = formatPath(keys);
    if (byPath.has(path)) continue;
    const last = items.at(-1);
    if (last?.origin === 'key') {
      // valibot reports a missing required key of a mapping, and a key a strict mapping does not allow
      // (expecting "never"), on the key itself.
      const missing = issue.type.endsWith('object') && issue.expected !== 'never';
      if (!missing && unknownKey !== undefined) {
        byPath.set(path, unknownKey(keys.slice(0, -1), String(last.key)));
        continue;
      }
      byPath.set(path, {
        path,
        message: missing ? 'expected this key, it is required' : issue.message,
        value: missing ? 'nothing' : `key ${String(last.key)}`,
      });
      continue;
    }
    // A rule between keys is shown with the value of the key it points at; a value a rule refused
    // as possibly secret (kubeconfig contents) only by its kind.
    const value = last === undefined ? issue.input : last.value;
    byPath.set(path, { path, message: issue.message, value: issue.input === REFUSED_VALUE ? hiddenValue(value) : renderValue(path, value, isSecret) });
  }
  return [...byPath.values()];
}
