/** `vendorctl accounts ...`: the account routes of docs/api.md#endpoints. */
import * as v from 'valibot';
import { accountPageSchema, accountSchema, registrationBatchSchema, type Account } from '../../shared/accounts/schema.ts';
import { toIssues } from '../../shared/accounts/validate.ts';
import { expectShape } from '../client.ts';
import type { Command, CommandContext } from '../context.ts';
import { usageError } from '../errors.ts';
import { documentsOf } from '../input.ts';
import { cell, render, renderTable, type Table } from '../output.ts';

/** The largest page the API serves (docs/api.md#limits). */
const PAGE_SIZE = 500;

function agentsCell(account: Account): string {
  return cell(account.agents.map((a) => (a.caching ? `${a.agentId} (caching)` : a.agentId)));
}

export function accountsTable(accounts: readonly Account[]): Table {
  return {
    columns: ['NAME', 'SOURCE', 'STATE', 'ZONE', 'AGENTS', 'MESSAGE'],
    rows: accounts.map((a) => [a.name, a.source, cell(a.state), cell(a.zoneId), agentsCell(a), cell(a.lastAssignmentMsg)]),
  };
}

/** Prints accounts as a table, or the API's own answer as JSON or YAML. */
function print(ctx: CommandContext, answer: unknown, what: string): void {
  const accounts = expectShape(v.array(accountSchema), Array.isArray(answer) ? answer : [answer], what);
  ctx.out(render(ctx.format, answer, () => renderTable(accountsTable(accounts))));
}

const path = (name: string) => `/vendor/accounts/${encodeURIComponent(name)}`;

const list: Command = {
  words: ['accounts', 'list'],
  args: '',
  summary: 'list the accounts the caller may read, every page',
  options: [],
  arity: [0, 0],
  async run(ctx) {
    const items: unknown[] = [];
    for (let page = 1; ; page++) {
      const { body } = await ctx.api.call('GET', `/vendor/accounts?page=${page}&limit=${PAGE_SIZE}`);
      const got = expectShape(accountPageSchema, body, 'the account list');
      items.push(...(body as { items: unknown[] }).items);
      if (got.items.length === 0 || items.length >= got.total) break;
    }
    print(ctx, items, 'the account list');
    return 0;
  },
};

const get: Command = {
  words: ['accounts', 'get'],
  args: '<name>',
  summary: 'show one account',
  options: [],
  arity: [1, 1],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', path(ctx.args[0]!));
    print(ctx, body, 'the account');
    return 0;
  },
};

/** The records of a file: one account, a list of them, or one per YAML document. */
export function registrationRecords(text: string, file: string): unknown[] {
  const records = documentsOf(text, file).flatMap((doc) => (Array.isArray(doc) ? doc : [doc]));
  const parsed = v.safeParse(registrationBatchSchema, records, { abortEarly: false });
  if (!parsed.success) throw usageError(`${file} does not hold account records ({ name, zoneId?, kubeconfigFile? })`, toIssues(parsed.issues));
  return records;
}

const register: Command = {
  words: ['accounts', 'register'],
  args: '-f <file>',
  summary: 'register driver-defined accounts for migration (POST /vendor/accounts)',
  options: [['file', 'YAML or JSON: one account record, a list of them, or one per document; - reads standard input']],
  arity: [0, 0],
  async run(ctx) {
    const file = ctx.flags.file;
    if (file === undefined) throw usageError('accounts register needs -f <file>');
    const records = registrationRecords(await ctx.readInput(file), file);
    const { body } = await ctx.api.call('POST', '/vendor/accounts', { body: records });
    print(ctx, body, 'the registered accounts');
    return 0;
  },
};

const activate: Command = {
  words: ['accounts', 'activate'],
  args: '<name>...',
  summary: 'activate registered accounts on the agents (PATCH /vendor/accounts)',
  options: [],
  arity: [1, 1000],
  async run(ctx) {
    const { body } = await ctx.api.call('PATCH', '/vendor/accounts', { body: ctx.args.map((name) => ({ name, state: 'ACTIVE' })) });
    print(ctx, body, 'the activated accounts');
    return 0;
  },
};

const remove: Command = {
  words: ['accounts', 'remove'],
  args: '<name>...',
  summary: 'take accounts back from the agents (DELETE /vendor/accounts/{name}), one after the other',
  options: [],
  arity: [1, 1000],
  async run(ctx) {
    const removed: unknown[] = [];
    for (const name of ctx.args) removed.push((await ctx.api.call('DELETE', path(name))).body);
    print(ctx, removed.length === 1 ? removed[0] : removed, 'the removed accounts');
    return 0;
  },
};

export const ACCOUNT_COMMANDS: readonly Command[] = [list, get, register, activate, remove];
