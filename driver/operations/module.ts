/**
 * The operations module of the driver (driver/handlers.ts): agents' operation results, and the
 * dispatcher that hands queued operations to the agents of this replica (dispatcher.ts).
 */
import { getAccount } from '../../shared/table/accounts.ts';
import { placeAllows } from '../assignment/wanted.ts';
import type { DriverModuleFactory } from '../handlers.ts';
import { SessionDirectory } from './directory.ts';
import { OperationDispatcher } from './dispatcher.ts';

export const operationsModule: DriverModuleFactory = (services) => {
  const log = services.log.child({ component: 'operations' });
  const dispatcher = new OperationDispatcher({
    table: services.table,
    clock: services.clock,
    log,
    replicaId: services.replicaId,
    directory: new SessionDirectory(services.sessions, services.table),
    config: services.config.operations,
    events: services.operationEvents,
  });
  const stop = new AbortController();
  let loop: Promise<void> | undefined;
  return {
    name: 'operations',
    handlers: {
      operationResult: async ({ body }, session) => {
        // Handed to this agent id is not enough: the stream must also be at a place that may hold the
        // account (an id another identity took over after the grace cannot finish what it was handed).
        const record = await getAccount(services.table, body.account, { consistent: true });
        if (record !== undefined && !placeAllows(record, session.agentId, { zone: session.zone, unzoned: session.identity.unzoned })) {
          log.warn({ operationId: body.operationId, account: body.account, agentId: session.agentId, identity: session.identity.name, zone: session.zone }, 'operation result ignored: the stream may not hold the account');
          return;
        }
        await dispatcher.recordResult(session.agentId, body);
      },
    },
    start: async (signal) => {
      signal.addEventListener('abort', () => stop.abort(), { once: true });
      loop = dispatcher.run(stop.signal).catch((err: unknown) => log.error({ err }, 'operation dispatch stopped'));
    },
    onSessionOpen: () => dispatcher.wake(),
    onSessionClose: () => dispatcher.wake(),
    onHoldingChange: (session, account, holding) => {
      if (holding?.state === 'held') dispatcher.wake();
      else void dispatcher.holdingLost(session.id, account).catch((err: unknown) => log.error({ err, account }, 'handing operations out again failed'));
    },
    stop: async () => {
      stop.abort();
      await loop;
    },
  };
};
