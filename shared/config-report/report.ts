import type { ConfigProblem, ConfigWarning } from './problems.ts';

/** A configuration file checked: valid exactly when `problems` is empty (then `config` is present). */
export interface CheckedConfig {
  source: string;
  config: { kubernetes: { accounts: readonly unknown[] } } | undefined;
  problems: readonly ConfigProblem[];
  warnings: readonly ConfigWarning[];
}

export function formatProblem(p: ConfigProblem): string {
  return p.value === undefined ? `${p.path}: ${p.message}` : `${p.path}: ${p.message}, got ${p.value}`;
}

export function formatWarning(w: ConfigWarning): string {
  return `${w.path}: ${w.message}`;
}

/**
 * The report `validate` of the agent and of the driver prints (and the agent before refusing to
 * start): the file and its verdict, every problem, then every warning.
 */
export function formatReport(result: CheckedConfig): string {
  const lines: string[] = [];
  const n = result.problems.length;
  if (n === 0) {
    const accounts = result.config?.kubernetes.accounts.length ?? 0;
    lines.push(`${result.source}: valid (${accounts} account${accounts === 1 ? '' : 's'})`);
  } else {
    lines.push(`${result.source}: not valid, ${n} problem${n === 1 ? '' : 's'}:`);
    for (const p of result.problems) lines.push(`  error   ${formatProblem(p)}`);
  }
  for (const w of result.warnings) lines.push(`  warning ${formatWarning(w)}`);
  return lines.join('\n') + '\n';
}
