/**
 * A driver replica with its wake endpoint (docs/protocol.md#6b-wakes): the endpoint listens first, so
 * its address is known when the first session is recorded; a verified wake reaches the modules
 * through `Driver.wake`. Beside it, on the same port number over TCP, it answers the API's result
 * asks from the operations that finish through it (`wake.results`) and its reservation asks, setting
 * an agent aside for an operation the API is about to store handed out (reservations.ts). Without a secret, or with
 * `wake.enabled: false`, it is the driver alone.
 */
import { systemClock } from '../../shared/clock.ts';
import { OperationEvents } from '../../shared/operations/events.ts';
import { getOperation } from '../../shared/table/operations/operations.ts';
import { createDriverMetrics } from '../metrics/metrics.ts';
import { startDriver, type Driver, type DriverOptions } from '../server.ts';
import { advertisedWakeAddress } from './address.ts';
import type { WakeConfig } from './config.ts';
import { resultAnswerBody } from '../../shared/wake/result-answer.ts';
import { namesOperation } from '../../shared/wake/message.ts';
import { startResultEndpoint, type ResultEndpoint } from './result-endpoint.ts';
import { reserveAskHandler } from './reserve-endpoint.ts';
import { HeldReservations } from './reservations.ts';
import { ResultNews } from './result-news.ts';
import { startWakeEndpoint, type WakeEndpoint } from './server.ts';

export interface WakeableDriverOptions extends DriverOptions {
  wake: WakeConfig;
  /** The shared wake secret (shared/wake/secret.ts); undefined turns the endpoint off. */
  wakeSecret: string | undefined;
}

export async function startWakeableDriver(options: WakeableDriverOptions): Promise<Driver> {
  const { wake, wakeSecret, ...driverOptions } = options;
  if (!wake.enabled || wakeSecret === undefined) {
    options.log.info({ enabled: wake.enabled, secret: wakeSecret !== undefined }, 'wake endpoint off: this replica finds work by polling alone');
    return startDriver(driverOptions);
  }
  const metrics = options.metrics ?? createDriverMetrics();
  const clock = options.clock ?? systemClock;
  let driver: Driver | undefined;
  // The operations that finish through this replica, for the API's result asks.
  const operationEvents = options.operationEvents ?? new OperationEvents();
  const news = new ResultNews(clock);
  // Heard once the finish's conditional write has held: the record answered is the one it returned.
  const unsubscribe = operationEvents.onFinished((op) => news.finished(op.id, wake.results ? resultAnswerBody(op) : undefined));
  const countReservation = (outcome: string) => metrics.reservations.inc({ outcome });
  // Agents set aside for the API in another process: the dispatcher attached to `operationEvents` reserves them.
  const held = new HeldReservations({
    reserve: (id, account, now) => operationEvents.reserve(id, account, now),
    clock,
    counted: countReservation,
    // A hold without a verdict: the operation may be stored handed out here, its `stored` lost.
    readStored: (id) => getOperation(options.table, id),
  });
  const start = async (): Promise<{ endpoint: WakeEndpoint; results: ResultEndpoint | undefined }> => {
    const endpoint = await startWakeEndpoint({
      config: wake,
      secret: wakeSecret,
      clock,
      log: options.log.child({ component: 'wake' }),
      onWake: (topic, named) => {
        // Stored queued after all: the claim this wake asks for must not find the id held here.
        if (named !== undefined && namesOperation(named)) held.releaseFor(named.id);
        driver?.wake(topic, named);
      },
      onVerdict: (verdict) => held.verdict(verdict),
      counted: (outcome) => metrics.wakes.inc({ outcome }),
    });
    if (!wake.results) return { endpoint, results: undefined };
    try {
      // TCP on the wake port's number: one port to advertise, one to open in the security group.
      const log = options.log.child({ component: 'wake-results' });
      const reserve = reserveAskHandler({ maxAgeMs: wake.maxAgeMs, maxPerSecond: wake.maxResultAsksPerSecond, secret: wakeSecret, clock, log, held, refused: countReservation });
      const results = await startResultEndpoint({ config: wake, port: endpoint.port, secret: wakeSecret, clock, log, news, counted: (outcome) => metrics.resultAsks.inc({ outcome }), reserve });
      return { endpoint, results };
    } catch (e) {
      await endpoint.close();
      throw e;
    }
  };
  let started: { endpoint: WakeEndpoint; results: ResultEndpoint | undefined } | undefined;
  // A port picked for UDP (port 0) may be taken for TCP: pick another.
  for (let attempt = 1; started === undefined; attempt++) {
    try {
      started = await start();
    } catch (e) {
      if (wake.port !== 0 || attempt >= 5 || (e as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
        unsubscribe();
        throw e;
      }
    }
  }
  const { endpoint, results } = started;
  const closeEndpoints = async () => {
    unsubscribe();
    held.close();
    await Promise.all([endpoint.close(), results?.close()]);
  };
  const address = advertisedWakeAddress(wake, endpoint.port);
  if (address === undefined) options.log.warn('no address to advertise for wakes (set wake.advertiseHost): this replica finds work by polling alone');
  try {
    driver = await startDriver({ ...driverOptions, metrics, operationEvents, ...(address === undefined ? {} : { wakeAddress: address }) });
  } catch (e) {
    await closeEndpoints();
    throw e;
  }
  const running = driver;
  return {
    ...running,
    close: async (graceMs) => {
      await closeEndpoints();
      await running.close(graceMs);
    },
  };
}
