import { Hono } from 'hono';
import type { ApiEnv } from '../auth/caller.ts';
import type { IntegerQuery } from '../http.ts';
import { authenticatedRoute, integerQueryParameters, json, jsonSchemaOf, named, pathParameter, problem } from '../openapi/describe.ts';
import { filteredQuery, zoneCheck } from '../query-filters.ts';
import { agentPageSchema, agentViewSchema } from '../../shared/answers/agents.ts';
import { getAgent, listAgents, type AgentDeps } from './service.ts';

export const DEFAULT_AGENT_LIMIT = 100;
export const MAX_AGENT_LIMIT = 500;

const AGENT_QUERY: IntegerQuery = { page: { default: 1, max: 1_000_000 }, limit: { default: DEFAULT_AGENT_LIMIT, max: MAX_AGENT_LIMIT } };
const AGENT_FILTERS = { zoneId: zoneCheck };

const agent = named('Agent', jsonSchemaOf(agentViewSchema, 'output'));

const listAgentsDescription = authenticatedRoute({
  operationId: 'listAgents',
  summary: 'The live agents, by zone then agent id, with the accounts each holds; a caller who is not an account manager sees only agents holding accounts it may read, and only those accounts.',
  parameters: [...integerQueryParameters(AGENT_QUERY), { name: 'zoneId', in: 'query', description: 'Only the agents of this zone.', schema: { type: 'string' } }],
  responses: {
    '200': { description: 'One page; `total` counts the agents the caller sees.', content: json(named('AgentPage', jsonSchemaOf(agentPageSchema, 'output', { Agent: agentViewSchema }), agent)) },
    '400': problem('Bad `page`, `limit` or `zoneId`, or an unknown query parameter.'),
  },
});

const getAgentDescription = authenticatedRoute({
  operationId: 'getAgent',
  summary: 'One live agent by id.',
  parameters: [pathParameter('agentId', 'The agent id.')],
  responses: {
    '200': { description: 'The agent.', content: json(agent) },
    '404': problem('No live agent with that id, or (to a caller who is not an account manager) none holding an account the caller may read.'),
  },
});

/** `GET /vendor/agents` and `GET /vendor/agents/{agentId}` (docs/api.md#agents): what the table knows of live agents. */
export function agentRoutes(deps: AgentDeps): Hono<ApiEnv> {
  return new Hono<ApiEnv>()
    .get('/', listAgentsDescription, async (c) => {
      const { integers, texts } = filteredQuery(c, AGENT_QUERY, AGENT_FILTERS);
      return c.json(await listAgents(deps, c.get('caller'), { page: integers.page as number, limit: integers.limit as number, ...(texts.zoneId === undefined ? {} : { zoneId: texts.zoneId }) }));
    })
    .get('/:agentId', getAgentDescription, async (c) => c.json(await getAgent(deps, c.get('caller'), c.req.param('agentId'))));
}
