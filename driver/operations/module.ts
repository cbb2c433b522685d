/**
 * The operations module of the driver (driver/handlers.ts): agents' operation results, and the
 * dispatcher that hands queued operations to the agents of this replica (dispatcher.ts).
 */
import { getAccount } from '../../shared/table/accounts/records.ts';
import { placeAllows } from '../accounts/wanted.ts';
import type { DriverModuleFactory } from '../handlers.ts';
import { SessionDirectory } from './directory.ts';
import { OperationDispatcher } from './dispatcher.ts';
import { namesOperation } from '../../shared/wake/message.ts';

/**
 * How long a stream's right to report results for an account, once read from the account item, is
 * taken as still holding: a stream's zone and identity never change, and an account moves to another
 * zone rarely, so a burst of results for one account costs one read instead of one each.
 */
export const PLACE_CHECK_REUSE_MS = 10_000;

export const operationsModule: DriverModuleFactory = (services) => {
  const log = services.log.child({ component: 'operations' });
  /** Per session id: accounts whose place check passed, and when. */
  const placeChecked = new Map<string, Map<string, number>>();
  const dispatcher = new OperationDispatcher({
    table: services.table,
    clock: services.clock,
    log,
    replicaId: services.replicaId,
    directory: new SessionDirectory(services.sessions, services.table),
    config: services.config.operations,
    events: services.operationEvents,
    metrics: services.metrics,
  });
  const stop = new AbortController();
  let loop: Promise<void> | undefined;
  return {
    name: 'operations',
    handlers: {
      operationResult: async ({ body }, session) => {
        // Handed to this agent id is not enough: the stream must also be at a place that may hold the
        // account (an id another identity took over after the grace cannot finish what it was handed).
        const now = services.clock.now();
        const checked = placeChecked.get(session.id)?.get(body.account);
        if (checked === undefined || now - checked > PLACE_CHECK_REUSE_MS) {
          const record = await getAccount(services.table, body.account, { consistent: true });
          if (record !== undefined && !placeAllows(record, session.agentId, { zone: session.zone, unzoned: session.identity.unzoned })) {
            placeChecked.get(session.id)?.delete(body.account);
            log.warn({ operationId: body.operationId, account: body.account, agentId: session.agentId, identity: session.identity.name, zone: session.zone }, 'operation result ignored: the stream may not hold the account');
            return;
          }
          if (session.open) {
            let accounts = placeChecked.get(session.id);
            if (accounts === undefined) placeChecked.set(session.id, (accounts = new Map()));
            accounts.set(body.account, now);
          }
        }
        await dispatcher.recordResult(session.agentId, body);
      },
    },
    start: async (signal) => {
      signal.addEventListener('abort', () => stop.abort(), { once: true });
      loop = dispatcher.run(stop.signal).catch((err: unknown) => log.error({ err }, 'operation dispatch stopped'));
    },
    onSessionOpen: () => dispatcher.wake(),
    onWake: (topic, named) => {
      if (topic !== 'operations') return;
      if (named !== undefined && namesOperation(named)) dispatcher.claimNamed(named);
      else dispatcher.wake();
    },
    onSessionClose: (session) => {
      placeChecked.delete(session.id);
      dispatcher.wake();
    },
    onHoldingChange: (session, account, holding) => {
      if (holding?.state === 'held') dispatcher.holdingGained();
      else void dispatcher.holdingLost(session.id, account).catch((err: unknown) => log.error({ err, account }, 'handing operations out again failed'));
    },
    stop: async () => {
      stop.abort();
      await loop;
    },
  };
};
