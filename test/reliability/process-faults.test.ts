/**
 * The process-fault scenario, short and seeded (test/reliability/scenario/scenario.ts says what it
 * does and checks): two driver replicas and three agents, each a process of its own, killed and
 * started again while accounts are registered, activated and deleted and operations run, and the
 * test API server changes objects and drops watches. `npm run soak` runs the same scenario for
 * minutes. Replay a failure with the seed printed: `SCENARIO_SEED=<seed> npx vitest run test/reliability/process-faults.test.ts`.
 */
import { describe, expect, it } from 'vitest';
import { Scenario } from './scenario/scenario.ts';

const SEED = process.env.SCENARIO_SEED === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(process.env.SCENARIO_SEED);
const RUN_MS = Number(process.env.SCENARIO_RUN_MS ?? 15_000);

describe('processes killed while the system works', () => {
  it('converges: accounts as asked and as the agents hold them, operations once, no secret anywhere', { timeout: 240_000 }, async () => {
    console.info(`process-fault scenario seed: ${SEED} (replay: SCENARIO_SEED=${SEED})`);
    const scenario = new Scenario({ seed: SEED, drivers: 2, zones: [{ zone: 'east_agents', agents: 2 }, { zone: 'west_agents', agents: 1 }], accounts: 5 });
    try {
      await scenario.start();
      await scenario.runFor(RUN_MS);
      const problems = await scenario.settle(60_000);
      const { counts } = scenario;
      expect(problems, `seed ${SEED}; errors logged: ${JSON.stringify(scenario.world.errorSamples.slice(0, 5))}`).toEqual([]);
      expect(counts.driverKills).toBeGreaterThan(0);
      expect(counts.agentKills).toBeGreaterThan(0);
      expect(counts.activations + counts.operations).toBeGreaterThan(0);
      // Every active account's cache was compared with the cluster, object by object.
      expect(scenario.cacheCompared).toBeGreaterThan(0);
      const { world } = scenario;
      console.info(JSON.stringify({ seed: SEED, ...counts, cacheCompared: scenario.cacheCompared, scanned: world.scanned, errorLines: Object.fromEntries(world.errors), errorSamples: world.errorSamples.slice(0, 3) }));
    } finally {
      await scenario.close();
    }
  });
});
