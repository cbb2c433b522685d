import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clusterScenarios } from './scenarios.ts';
import type { ClusterTarget, StartedTarget, TargetProvider } from './target.ts';

const START_TIMEOUT_MS = 180_000;

/**
 * Registers every cluster scenario against one target. A target this machine cannot run gets one
 * test instead, named with the reason, that passes only when a reason was reported: the run says
 * plainly that this part did not run rather than skipping quietly.
 */
export function describeClusterScenarios(provider: TargetProvider): void {
  const availability = provider.availability();
  if (!availability.available) {
    test(`${provider.name}: the real-cluster suite did not run: ${availability.reason}`, () => {
      console.warn(`[cluster scenarios] ${provider.name} did not run: ${availability.reason}`);
      expect(availability.reason.trim().length).toBeGreaterThan(0);
    });
    return;
  }

  describe(`cluster scenarios against ${provider.name}`, () => {
    let started: StartedTarget | undefined;
    const target = (): ClusterTarget => {
      if (!started) throw new Error(`${provider.name} did not start`);
      return started.target;
    };
    beforeAll(async () => {
      started = await provider.start();
    }, START_TIMEOUT_MS);
    afterAll(async () => {
      await started?.close();
    }, START_TIMEOUT_MS);

    for (const scenario of clusterScenarios) {
      test(scenario.name, () => scenario.run(target()), scenario.timeoutMs);
    }
  });
}
