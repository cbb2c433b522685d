/** `vendorctl agents ...`: the live agents (docs/api.md#agents). */
import * as v from 'valibot';
import { agentViewSchema, type AgentView } from '../../shared/answers/agents.ts';
import { expectShape } from '../client.ts';
import type { Command, CommandContext } from '../context.ts';
import { cell, render, renderTable } from '../output.ts';
import { everyNumberedPage, queryOf } from '../query.ts';

/** The largest page of agents the API serves (docs/api.md#agents). */
const AGENT_PAGE_SIZE = 500;

function printAgents(ctx: CommandContext, answer: unknown, agents: readonly AgentView[]): void {
  ctx.out(
    render(ctx.format, answer, () =>
      renderTable({
        columns: ['AGENT ID', 'ZONE', 'IDENTITY', 'VERSION', 'CONNECTED SINCE', 'LAST HEARTBEAT', 'ACCOUNTS (HELD/CACHING)'],
        rows: agents.map((a) => [a.agentId, cell(a.zoneId), cell(a.identity), cell(a.version), cell(a.connectedAt), cell(a.lastHeartbeatAt), `${a.accounts.length}/${a.caching}`]),
      }),
    ),
  );
}

const list: Command = {
  words: ['agents', 'list'],
  args: '',
  summary: 'list the live agents, every page (GET /vendor/agents)',
  options: [['zone', "only this zone's agents"]],
  arity: [0, 0],
  async run(ctx) {
    const items = await everyNumberedPage(
      ctx.api,
      (page) => `/vendor/agents${queryOf(ctx.flags, { zone: 'zoneId' }, { page: String(page), limit: String(AGENT_PAGE_SIZE) })}`,
      'the agent list',
    );
    const agents = expectShape(v.array(agentViewSchema), items, 'the agent list');
    printAgents(ctx, items, agents);
    return 0;
  },
};

const get: Command = {
  words: ['agents', 'get'],
  args: '<agentId>',
  summary: 'show one live agent and the accounts it holds',
  options: [],
  arity: [1, 1],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', `/vendor/agents/${encodeURIComponent(ctx.args[0]!)}`);
    const agent = expectShape(agentViewSchema, body, 'the agent');
    printAgents(ctx, body, [agent]);
    if (ctx.format === 'table' && agent.accounts.length > 0) {
      ctx.out(`\n${renderTable({ columns: ['ACCOUNT', 'CACHING'], rows: agent.accounts.map((a) => [a.name, String(a.caching)]) })}`);
    }
    return 0;
  },
};

export const AGENT_COMMANDS: readonly Command[] = [list, get];
