import { isDeepStrictEqual } from 'node:util';
import type { AccountConfig, AgentConfig } from './schema.ts';

export interface AccountsDiff {
  added: AccountConfig[];
  /** The new settings of accounts whose settings changed. */
  changed: AccountConfig[];
  /** The old settings of accounts no longer in the file. */
  removed: AccountConfig[];
}

/** What a reload changes; accounts not named here keep running untouched. */
export interface ConfigChange {
  previous: AgentConfig;
  next: AgentConfig;
  accounts: AccountsDiff;
  /** Settings other than the accounts that changed: `logging`, `server`, `kubernetes.retries`, ... */
  sections: string[];
}

function changedSections(previous: AgentConfig, next: AgentConfig): string[] {
  const out: string[] = [];
  for (const key of Object.keys(next) as (keyof AgentConfig)[]) {
    if (key === 'kubernetes') {
      for (const sub of Object.keys(next.kubernetes) as (keyof AgentConfig['kubernetes'])[]) {
        if (sub !== 'accounts' && !isDeepStrictEqual(previous.kubernetes[sub], next.kubernetes[sub])) out.push(`kubernetes.${sub}`);
      }
    } else if (!isDeepStrictEqual(previous[key], next[key])) {
      out.push(key);
    }
  }
  return out;
}

export function diffConfig(previous: AgentConfig, next: AgentConfig): ConfigChange {
  const before = new Map(previous.kubernetes.accounts.map((a) => [a.name, a]));
  const after = new Map(next.kubernetes.accounts.map((a) => [a.name, a]));
  const accounts: AccountsDiff = { added: [], changed: [], removed: [] };
  for (const [name, account] of after) {
    const old = before.get(name);
    if (old === undefined) accounts.added.push(account);
    else if (!isDeepStrictEqual(old, account)) accounts.changed.push(account);
  }
  for (const [name, account] of before) if (!after.has(name)) accounts.removed.push(account);
  return { previous, next, accounts, sections: changedSections(previous, next) };
}

export function isEmptyChange(change: ConfigChange): boolean {
  const { added, changed, removed } = change.accounts;
  return added.length + changed.length + removed.length + change.sections.length === 0;
}
