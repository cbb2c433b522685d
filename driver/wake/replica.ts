/**
 * A driver replica with its wake endpoint (docs/protocol.md#6b-wakes): the endpoint listens first, so
 * its address is known when the first session is recorded; a verified wake reaches the modules
 * through `Driver.wake`. Without a secret, or with `wake.enabled: false`, it is the driver alone.
 */
import { systemClock } from '../../shared/clock.ts';
import { createDriverMetrics } from '../metrics/metrics.ts';
import { startDriver, type Driver, type DriverOptions } from '../server.ts';
import { advertisedWakeAddress } from './address.ts';
import type { WakeConfig } from './config.ts';
import { startWakeEndpoint } from './server.ts';

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
  let driver: Driver | undefined;
  const endpoint = await startWakeEndpoint({
    config: wake,
    secret: wakeSecret,
    clock: options.clock ?? systemClock,
    log: options.log.child({ component: 'wake' }),
    onWake: (topic) => driver?.wake(topic),
    counted: (outcome) => metrics.wakes.inc({ outcome }),
  });
  const address = advertisedWakeAddress(wake, endpoint.port);
  if (address === undefined) options.log.warn('no address to advertise for wakes (set wake.advertiseHost): this replica finds work by polling alone');
  try {
    driver = await startDriver({ ...driverOptions, metrics, ...(address === undefined ? {} : { wakeAddress: address }) });
  } catch (e) {
    await endpoint.close();
    throw e;
  }
  const started = driver;
  return {
    ...started,
    close: async (graceMs) => {
      await endpoint.close();
      await started.close(graceMs);
    },
  };
}
