/** `vendorctl agent-identities ...`: the agent identities kept in the table (docs/api.md#agent-identities); account managers only. */
import * as v from 'valibot';
import { expectShape } from '../client.ts';
import type { Command, CommandContext } from '../context.ts';
import { cell, render, renderTable } from '../output.ts';

const identitySchema = v.looseObject({
  name: v.string(),
  zones: v.array(v.string()),
  unzoned: v.boolean(),
  agentIds: v.array(v.string()),
  staticAccounts: v.array(v.string()),
});

function print(ctx: CommandContext, answer: unknown, identities: readonly v.InferOutput<typeof identitySchema>[]): void {
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
    const { items } = expectShape(v.looseObject({ items: v.array(identitySchema) }), body, 'the agent identities');
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
    print(ctx, body, [expectShape(identitySchema, body, 'the agent identity')]);
    return 0;
  },
};

export const AGENT_IDENTITY_COMMANDS: readonly Command[] = [list, get];
