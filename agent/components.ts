import { accountHolderComponent } from './accounts/component.ts';
import type { ComponentFactory } from './component.ts';
import { driverConnectionComponent } from './connection/component.ts';
import { healthComponent, metricsComponent, profilingComponent } from './observability/components.ts';
import { budgetComponent } from './tasks/component.ts';

/**
 * The components of a running agent, started in this order and stopped in reverse: the account
 * holder stops (its workers flush what they send) before the driver connection delivers it and closes.
 */
export const AGENT_COMPONENTS: readonly ComponentFactory[] = [
  budgetComponent,
  healthComponent,
  metricsComponent,
  profilingComponent,
  driverConnectionComponent,
  accountHolderComponent,
];
