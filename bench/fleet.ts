import { FLEET_DEFAULTS, TARGET_MS, runFleetBench } from './fleet-bench.ts';

// `npm run bench:fleet`: one JSON line per phase, then the targets met or not.
const n = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const lines = await runFleetBench(
  {
    accounts: n('BENCH_ACCOUNTS', FLEET_DEFAULTS.accounts),
    zones: n('BENCH_ZONES', FLEET_DEFAULTS.zones),
    agentsPerZone: n('BENCH_AGENTS_PER_ZONE', FLEET_DEFAULTS.agentsPerZone),
    realAgents: n('BENCH_REAL_AGENTS', FLEET_DEFAULTS.realAgents),
    realAccounts: n('BENCH_REAL_ACCOUNTS', FLEET_DEFAULTS.realAccounts),
    operations: n('BENCH_OPERATIONS', FLEET_DEFAULTS.operations),
    phaseLimitMs: n('BENCH_PHASE_LIMIT_MS', FLEET_DEFAULTS.phaseLimitMs),
  },
  (line) => process.stdout.write(`${JSON.stringify(line)}\n`),
);
const figure = (name: string) => lines.find((l) => l.figure === name) ?? {};
const killed = figure('replica_killed');
process.stdout.write(
  `${JSON.stringify({
    bench: 'fleet',
    figure: 'targets',
    target_ms: TARGET_MS,
    all_active_within_target: figure('activate').within_target === true,
    replica_kill_recovered_within_target: killed.within_target === true,
    nothing_lost: killed.accounts_lost === 0 && killed.operations_unfinished === 0,
    spread_even_after_activation: figure('spread_after_activation').zones_even === figure('spread_after_activation').zones,
    join_even_with_fewest_moves: figure('agent_joined').even_ms !== null && figure('agent_joined').roles_moved === figure('agent_joined').fewest_moves,
    leave_even_with_fewest_moves: figure('agent_left').even_ms !== null && figure('agent_left').roles_moved === figure('agent_left').fewest_moves,
  })}\n`,
);
process.exit(0);
