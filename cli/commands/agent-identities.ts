/** `vendorctl agent-identities ...`: the agent identities kept in the table (docs/api.md#agent-identities); account managers only. */
import { identityListSchema, identityViewSchema, type IdentityView } from '../../shared/answers/agent-identities.ts';
import { expectShape } from '../client.ts';
import type { Command, CommandContext } from '../context.ts';
import { cell, render, renderTable } from '../output.ts';

function print(ctx: CommandContext, answer: unknown, identities: readonly IdentityView[]): void {
  ctx.out(
    render(ctx.format, answer, () =>
      renderTable({
        columns: ['NAME', 'ZONES', 'UNZONED', 'AGENT IDS', 'STATIC ACCOUNTS'],
        rows: identities.map((i) => [i.name, cell(i.zones), String(i.unzoned), cell(i.agentIds), cell(i.staticAccounts)]),
      }),
    ),
  );
}

const list: Command = {
  words: ['agent-identities', 'list'],
  args: '',
  summary: 'list the agent identities kept in the table',
  options: [],
  arity: [0, 0],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', '/vendor/agent-identities');
    const { items } = expectShape(identityListSchema, body, 'the agent identities');
    print(ctx, (body as { items: unknown }).items, items);
    return 0;
  },
};

const get: Command = {
  words: ['agent-identities', 'get'],
  args: '<name>',
  summary: 'show one agent identity',
  options: [],
  arity: [1, 1],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', `/vendor/agent-identities/${encodeURIComponent(ctx.args[0]!)}`);
    print(ctx, body, [expectShape(identityViewSchema, body, 'the agent identity')]);
    return 0;
  },
};

export const AGENT_IDENTITY_COMMANDS: readonly Command[] = [list, get];
