/**
 * What one table request of the activation path costs the table process (dynalite), by what it sends:
 * the API's activation, the lead's hand-out (with the caching election) and each agent's confirmation,
 * built by the very `...Params()` functions that send them, on account items of the fleet's shape
 * (a driver-config definition, a registration, two agents' entries). Variants: as sent now (the
 * activation and the hand-out ask nothing back, the confirmation tests `removing` by its absence), as
 * sent before (every write `ReturnValues: ALL_NEW`, the confirmation with `(attribute_not_exists(...)
 * OR ... <> :true)`), each factor alone, and on an item whose definition carries 4 KB of settings;
 * and the floor, one SET on a three-attribute item. The table runs in a process of its own
 * (bench/table-process.ts) and its CPU is read from /proc around each step's writes only (the reads
 * that give each writer its item are left out); the variants take turns, `BENCH_ROUNDS` times, and
 * the median is printed (docs/benchmarks.md#table-cost-npm-run-benchtable-cost).
 *
 *   npm run bench:table-cost     # BENCH_ACCOUNTS (500) accounts per variant and round, BENCH_ROUNDS (3)
 */
import { UpdateCommand, PutCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import type { AccountRecord, AgentResult, Definition } from '../shared/accounts/model.ts';
import { runBounded } from '../shared/table/core/bounded.ts';
import { confirmAnswerParams } from '../shared/table/accounts/answer-write.ts';
import { createAccount, getAccount, updateAccountParams } from '../shared/table/accounts/records.ts';
import { loadAverage, startBenchTable } from './support.ts';

const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = 16;
const ZONE = 'fleet_z00';
const AGENTS = ['fleet_z00-a0', 'fleet_z00-a1'] as const;

function definition(large: boolean): Definition {
  // The fleet's definitions name a kubeconfig file only; a large one carries 4 KB of namespaces.
  const namespaces = large ? Array.from({ length: 128 }, (_, i) => `namespace-${String(i).padStart(4, '0')}-of-the-team`) : undefined;
  return { kind: 'driver-config', settings: { kubeconfigFile: '/k/fleet', ...(namespaces === undefined ? {} : { namespaces }) }, at: 1 };
}

function entry(agentId: string, caching: boolean, generation: number, at: number, ok: boolean): AgentResult {
  return { agentId, caching, ok, assigned: generation, at, ...(ok ? { generation } : {}) };
}

interface Variant {
  large: boolean;
  /** The activation's and the hand-out's: the whole item back, or nothing. */
  writeReturnsItem: boolean;
  /** The confirmation's. */
  confirmReturnsItem: boolean;
  /** The confirmation's `removing` test as it was: with an OR. */
  removingWithOr: boolean;
}

const VARIANTS: Record<string, Variant> = {
  now: { large: false, writeReturnsItem: false, confirmReturnsItem: true, removingWithOr: false },
  before: { large: false, writeReturnsItem: true, confirmReturnsItem: true, removingWithOr: true },
  'before, removing without OR': { large: false, writeReturnsItem: true, confirmReturnsItem: true, removingWithOr: false },
  'now, confirmation returning nothing': { large: false, writeReturnsItem: false, confirmReturnsItem: false, removingWithOr: false },
  'now, 4 KB settings': { large: true, writeReturnsItem: false, confirmReturnsItem: true, removingWithOr: false },
  'before, 4 KB settings': { large: true, writeReturnsItem: true, confirmReturnsItem: true, removingWithOr: true },
};

function confirmation(table: string, r: AccountRecord, agent: 0 | 1, now: number, v: Variant): UpdateCommandInput {
  const p = confirmAnswerParams(table, r, { entry: entry(AGENTS[agent], agent === 0, r.generation, now, true), lastAssignmentMsg: 'connected to https://10.0.0.1:6443', ...(agent === 0 ? { state: 'ACTIVE' as const } : {}) }, now);
  const withOr = v.removingWithOr
    ? {
        ConditionExpression: p.ConditionExpression?.replace('attribute_not_exists(agents.#a.removing)', '(attribute_not_exists(agents.#a.removing) OR agents.#a.removing <> :true)'),
        ExpressionAttributeValues: { ...p.ExpressionAttributeValues, ':true': true },
      }
    : {};
  const { ReturnValues: _returned, ...rest } = p;
  return { ...rest, ...withOr, ...(v.confirmReturnsItem ? { ReturnValues: 'ALL_NEW' as const } : {}) };
}

/** The writes of an account's activation with two agents in its zone, in order, each from the item as read. */
const STEPS: { step: string; params: (table: string, r: AccountRecord, now: number, v: Variant) => UpdateCommandInput }[] = [
  {
    step: 'activation (API)',
    params: (table, r, now, v) =>
      updateAccountParams(table, r.name, r.version, { registration: { zoneId: ZONE, at: now }, state: 'ACTIVE', generation: r.generation + 1 }, now, 'c0ffee00-0000-4000-8000-000000000000', v.writeReturnsItem),
  },
  {
    step: 'hand-out with election (driver)',
    params: (table, r, now, v) =>
      updateAccountParams(table, r.name, r.version, { cachingAgentId: AGENTS[0], cachingEpoch: 1, setAgents: AGENTS.map((a, i) => entry(a, i === 0, r.generation, now, false)) }, now, undefined, v.writeReturnsItem),
  },
  { step: 'confirmation, first agent (driver)', params: (table, r, now, v) => confirmation(table, r, 0, now, v) },
  { step: 'confirmation, second agent (driver)', params: (table, r, now, v) => confirmation(table, r, 1, now, v) },
];

const table = await startBenchTable('process');
const t = table.client();
const cpu = (): number => table.cpuMs() ?? 0;

/** CPU ms of the table per call of `send`, over `names`. */
async function measure(names: readonly string[], send: (name: string) => Promise<unknown>): Promise<number> {
  const before = cpu();
  await runBounded(names.map((name) => async () => void (await send(name))), CONCURRENCY);
  return (cpu() - before) / names.length;
}

const samples: Record<string, Record<string, number[]>> = {};
const itemBytes: Record<string, number> = {};
let batch = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, variant] of Object.entries(VARIANTS)) {
    batch++;
    const names = Array.from({ length: ACCOUNTS }, (_, i) => `cost-${batch}-${String(i).padStart(5, '0')}`);
    await runBounded(names.map((name) => async () => void (await createAccount(t, name, 1, { 'driver-config': definition(variant.large) }))), CONCURRENCY);
    for (const { step, params } of STEPS) {
      const read = new Map<string, AccountRecord>();
      await runBounded(names.map((name) => async () => void read.set(name, (await getAccount(t, name, { consistent: true }))!)), CONCURRENCY);
      const ms = await measure(names, (name) => t.client.send(new UpdateCommand(params(t.tableName, read.get(name)!, 2, variant))));
      ((samples[label] ??= {})[step] ??= []).push(ms);
    }
    itemBytes[label] = JSON.stringify(await getAccount(t, names[0]!)).length;
  }
  // The floor: a three-attribute item, one SET, the version condition, nothing returned.
  const names = Array.from({ length: ACCOUNTS }, (_, i) => `min-${round}-${String(i).padStart(5, '0')}`);
  await runBounded(names.map((name) => async () => void (await t.client.send(new PutCommand({ TableName: t.tableName, Item: { pk: 'MIN', sk: name, version: 1 } })))), CONCURRENCY);
  const ms = await measure(names, (name) =>
    t.client.send(new UpdateCommand({ TableName: t.tableName, Key: { pk: 'MIN', sk: name }, UpdateExpression: 'SET version = version + :one', ConditionExpression: 'version = :expected', ExpressionAttributeValues: { ':one': 1, ':expected': 1 } })),
  );
  ((samples['floor: one SET on a three-attribute item'] ??= {})['update'] ??= []).push(ms);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const round3 = (x: number): number => Math.round(x * 1000) / 1000;
for (const [label, steps] of Object.entries(samples)) {
  const perStep = Object.fromEntries(Object.entries(steps).map(([step, xs]) => [step, round3(median(xs))]));
  const total = round3(Object.values(perStep).reduce((a, b) => a + b, 0));
  process.stdout.write(`${JSON.stringify({ bench: 'table-cost', variant: label, ...(itemBytes[label] === undefined ? {} : { item_bytes: itemBytes[label] }), table_cpu_ms_per_request: perStep, table_cpu_ms_per_account: total })}\n`);
}
process.stdout.write(`${JSON.stringify({ bench: 'table-cost', accounts_per_variant: ACCOUNTS, rounds: ROUNDS, concurrency: CONCURRENCY, load_average_1m: loadAverage() })}\n`);
await table.close();
