/**
 * The static accounts of a hello, checked by the one rule of an account's settings
 * (shared/accounts/settings.ts) before the table records them.
 */
import * as v from 'valibot';
import { staticAccountSettings } from '../shared/accounts/settings-message.ts';
import { accountSettingsSchema, type AccountSettings } from '../shared/accounts/settings.ts';
import { issuePath } from '../shared/accounts/validate.ts';
import type { Hello__Output } from '../shared/protocol/messages.ts';

/**
 * The static accounts of a hello that can be recorded. One the table cannot hold (a name outside
 * the account name rules, say) is left out and reported through `refuse`, so that one bad entry in
 * an agent's file does not keep the agent from connecting. An agent's own check of its file refuses
 * all of these before it connects.
 */
export function staticAccountsOf(hello: Hello__Output, refuse: (problem: string) => void): AccountSettings[] {
  const out: AccountSettings[] = [];
  hello.staticAccounts.forEach((a, i) => {
    const result = v.safeParse(accountSettingsSchema, staticAccountSettings(a));
    if (result.success) {
      out.push(result.output);
      return;
    }
    const problems = result.issues.map((issue) => `${issuePath(issue) || '(account)'} ${issue.message}`).join('; ');
    refuse(`static account ${JSON.stringify(a.name.slice(0, 80))} (hello.staticAccounts[${i}]) left out: ${problems}`);
  });
  return out;
}
