/**
 * The accounts module: agents' answers to assignments, and the reconciler that hands accounts
 * to the agents of this replica (reconciler.ts).
 */
import type { DriverModuleFactory } from '../handlers.ts';
import { AssignmentReconciler } from './reconciler.ts';
import { namesOperation } from '../../shared/wake/message.ts';

export const accountsModule: DriverModuleFactory = (services) => {
  const reconciler = new AssignmentReconciler({
    table: services.table,
    clock: services.clock,
    log: services.log.child({ component: 'assignment' }),
    settings: services.config.assignment,
    holdingChanged: services.holdingChanged,
    metrics: services.metrics,
  });
  return {
    name: 'assignment',
    handlers: {
      assignmentResult: async ({ body }, session) => {
        const outcome = await reconciler.handleResult(body, session);
        services.metrics?.assignmentResults.inc({ ok: String(body.ok), outcome });
        services.log.info(
          { sessionId: session.id, agentId: session.agentId, account: body.account, generation: body.generation, ok: body.ok, outcome },
          'assignment result',
        );
      },
    },
    start: (signal) => reconciler.start(signal),
    onSessionOpen: (session) => reconciler.sessionOpened(session),
    onSessionClose: (session) => reconciler.sessionClosed(session),
    onWake: (topic, named) => {
      if (topic !== 'accounts') return;
      // A named account is settled from its item; the feed's next poll reads its entry as before.
      if (named !== undefined && !namesOperation(named)) reconciler.settleNamed(named.account);
      else reconciler.wakeFeed();
    },
    stop: () => reconciler.stop(),
  };
};
