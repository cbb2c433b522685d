import type { ComponentFactory } from './component.ts';
import { healthComponent, metricsComponent, profilingComponent } from './observability/components.ts';
import { budgetComponent } from './tasks/component.ts';

/**
 * The components of a running agent, started in this order and stopped in reverse. The driver
 * connection and the cluster cache are added here as factories of the same shape.
 */
export const AGENT_COMPONENTS: readonly ComponentFactory[] = [budgetComponent, healthComponent, metricsComponent, profilingComponent];
