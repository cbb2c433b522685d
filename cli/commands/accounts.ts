/** `vendorctl accounts ...`: the account routes of docs/api.md#endpoints. */
import * as v from 'valibot';
import { accountSchema, registrationBatchSchema, type Account } from '../../shared/accounts/schema.ts';
import { accountSummarySchema, type AccountSummary } from '../../shared/answers/account-summary.ts';
import { toIssues } from '../../shared/accounts/validate.ts';
import { expectShape } from '../client.ts';
import type { Command, CommandContext } from '../context.ts';
import { usageError } from '../errors.ts';
import { documentsOf } from '../input.ts';
import { cell, render, renderTable, type Table } from '../output.ts';
import { everyNumberedPage, queryOf } from '../query.ts';

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

/** The flags of `accounts list` and the API's filter parameters they pass (docs/api.md#filters). */
const LIST_FILTERS = { state: 'state', zone: 'zoneId', source: 'source', prefix: 'namePrefix' } as const;

const list: Command = {
  words: ['accounts', 'list'],
  args: '',
  summary: 'list the accounts the caller may read, every page (narrowed by the filters given)',
  options: [
    ['state', 'only accounts in these states: INACTIVE, ACTIVE, FAILED, separated by commas'],
    ['zone', 'only accounts of this zone'],
    ['source', 'only accounts of these sources: driver, static-agent-config, separated by commas'],
    ['prefix', 'only accounts whose names start with it'],
  ],
  arity: [0, 0],
  async run(ctx) {
    const items = await everyNumberedPage(
      ctx.api,
      (page) => `/vendor/accounts${queryOf(ctx.flags, LIST_FILTERS, { page: String(page), limit: String(PAGE_SIZE) })}`,
      'the account list',
    );
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

/** One row per counted value: `state ACTIVE 2`, with `(none)` for the accounts without a state or zone. */
function summaryTable(s: AccountSummary): Table {
  const rows = (by: string, counts: Record<string, number>, without?: number) => [
    ...Object.entries(counts).map(([value, n]) => [by, value, String(n)]),
    ...(without === undefined || without === 0 ? [] : [[by, '(none)', String(without)]]),
  ];
  return {
    columns: ['BY', 'VALUE', 'ACCOUNTS'],
    rows: [['total', '-', String(s.total)], ...rows('state', s.byState, s.withoutState), ...rows('zone', s.byZone, s.withoutZone), ...rows('source', s.bySource)],
  };
}

const summary: Command = {
  words: ['accounts', 'summary'],
  args: '',
  summary: 'count the accounts the caller may read by state, zone and source (GET /vendor/account-summary)',
  options: [],
  arity: [0, 0],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', '/vendor/account-summary');
    const counts = expectShape(accountSummarySchema, body, 'the account summary');
    ctx.out(render(ctx.format, body, () => renderTable(summaryTable(counts))));
    return 0;
  },
};

export const ACCOUNT_COMMANDS: readonly Command[] = [list, get, summary, register, activate, remove];
