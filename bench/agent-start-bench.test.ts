import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { benchAgentStart, packagesImportedBy } from './agent-start-bench.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

// Runs the benchmark small, to keep it working; only what does not depend on the machine is asserted.
describe('bench:agent-start', () => {
  it('the baseline imports the packages of the agent module graph, lazy ones included, and nothing of the control plane', () => {
    const packages = packagesImportedBy(join(root, 'agent/main.ts'));
    expect(packages).toEqual(expect.arrayContaining(['@grpc/grpc-js', '@kubernetes/client-node', '@aws-sdk/client-secrets-manager', 'pino', 'yaml']));
    expect(packages.filter((p) => p.startsWith('@aws-sdk/client-dynamodb') || p === 'hono' || p === 'dynalite')).toEqual([]);
  });

  it('the agent starts without @kubernetes/client-node: only the first account loads it', () => {
    const atStart = packagesImportedBy(join(root, 'agent/main.ts'), { lazy: false });
    expect(atStart).toEqual(expect.arrayContaining(['@grpc/grpc-js', 'pino', 'prom-client', 'yaml']));
    expect(atStart).not.toContain('@kubernetes/client-node');
  });

  it('prints start-up figures for each account count beside the bare process', async () => {
    const lines: Record<string, unknown>[] = [];
    await benchAgentStart({ runs: 1, accountCounts: [0, 2], idleMs: 50 }, (l) => void lines.push(l));
    expect(lines.map((l) => l.figure)).toEqual(['start_0_accounts', 'start_2_accounts', 'baseline_packages']);
    for (const l of lines.slice(0, 2)) {
      expect(l).toMatchObject({ runs: 1, exit_codes: [0], baseline: { n: 2 } });
      expect(l.ready_p50_ms).toBeGreaterThan(0);
      expect(l.all_confirmed_p50_ms).toBeGreaterThanOrEqual(l.ready_p50_ms as number);
      expect(l.rss_idle_p50_mib).toBeGreaterThan(0);
    }
  }, 120_000);
});
