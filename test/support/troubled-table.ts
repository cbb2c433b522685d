/**
 * A client of the same table whose reads of some accounts are in trouble, as when their partitions are
 * slow or throttled: from the moment a name is in `state.trouble`, every GetItem whose key names it is
 * held until `release()`, or refused as throttled while `state.throttled` is set; every other request
 * goes through. A client of its own, not a view of the given one: a driver adds its own middleware to
 * the client it is given.
 */
import type { Driver } from '../../driver/server.ts';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';
import { AGENT_TOKEN, type AccountsWorld } from './accounts-world.ts';
import { ProtocolAgent } from './protocol-agent.ts';

export interface TroubledTable {
  table: TableRef;
  state: { trouble: Set<string>; throttled: boolean; held: number; refused: number };
  release(): void;
  close(): void;
}

export async function troubledTable(t: TableRef): Promise<TroubledTable> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const state = { trouble: new Set<string>(), throttled: false, held: 0, refused: 0 };
  const endpoint = await t.client.config.endpoint?.();
  if (endpoint === undefined) throw new Error('the table client has no endpoint');
  const client = createDocumentClient({ endpoint: `${endpoint.protocol}//${endpoint.hostname}:${endpoint.port ?? 80}`, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // The table client sends a document command as the low-level one it wraps, with its input as given.
      if (state.trouble.size > 0 && context.commandName === 'GetItemCommand') {
        const key = JSON.stringify((args.input as { Key?: unknown }).Key);
        if ([...state.trouble].some((name) => key.includes(name))) {
          if (state.throttled) {
            state.refused++;
            throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'client' });
          }
          state.held++;
          await released;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'troubledPartitions' },
  );
  return { table: { client, tableName: t.tableName }, state, release, close: () => client.destroy() };
}

/**
 * A fresh world with `names` driver-defined, a driver on a troubled client of its table, and one
 * protocol agent of zone `z` that holds and caches every account, all ACTIVE and confirmed.
 */
export async function troubledWorld(world: AccountsWorld, names: readonly string[]): Promise<{ troubled: TroubledTable; agent: ProtocolAgent; driver: Driver }> {
  await world.fresh(names.map((name) => ({ name })));
  const troubled = await troubledTable(world.table);
  world.onReset(() => troubled.close());
  const driver = await world.driver({ table: troubled.table });
  const agent = new ProtocolAgent({ target: `127.0.0.1:${driver.port}`, agentId: 'a1', zone: 'z', token: AGENT_TOKEN });
  world.onReset(() => agent.stop());
  for (const [method, body] of [
    ['POST', names.map((name) => ({ name, zoneId: 'z' }))],
    ['PATCH', names.map((name) => ({ name, state: 'ACTIVE' }))],
  ] as const) {
    const answer = await world.call(method, '/vendor/accounts', body);
    if (answer.status !== 200) throw new Error(`${method} /vendor/accounts: ${answer.status} ${JSON.stringify(answer.json)}`);
  }
  const want = [...names].sort().join();
  await until(async () => agent.caching().sort().join() === want && (await world.confirmedBy(names, 1)).length === names.length, 'the agent to hold and cache every account');
  return { troubled, agent, driver };
}

async function until(check: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
