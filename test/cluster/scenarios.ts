import { applyScenarios } from './scenarios/apply.ts';
import { authScenarios } from './scenarios/auth.ts';
import { crdScenarios } from './scenarios/crds.ts';
import { discoveryScenarios } from './scenarios/discovery.ts';
import type { Scenario } from './scenarios/kube.ts';
import { listScenarios } from './scenarios/lists.ts';
import { objectScenarios } from './scenarios/objects.ts';
import { selectorScenarios } from './scenarios/selectors.ts';
import { watchScenarios } from './scenarios/watches.ts';

/**
 * The one set of cluster scenarios every API server target is held to: what the agent relies on,
 * as kube-apiserver does it. Where a target disagrees with the real server, the target is wrong.
 */
export const clusterScenarios: readonly Scenario[] = [
  ...discoveryScenarios,
  ...objectScenarios,
  ...listScenarios,
  ...watchScenarios,
  ...selectorScenarios,
  ...crdScenarios,
  ...applyScenarios,
  ...authScenarios,
];
