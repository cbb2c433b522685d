/**
 * The agent's connection to the driver as a component: `driver.*`, `kubernetes.reconnectTimeoutMs`
 * and `timeoutSeconds` of vendor-agent.yml, the `driver` readiness probe (ready only while a stream
 * is welcomed), and the `driverConnected` / `driverReconnects` metrics. On stop it waits a bounded
 * time for the driver to acknowledge what is queued, then closes the stream.
 */
import { VendorError } from '../../shared/errors.ts';
import type { ComponentFactory } from '../component.ts';
import type { AgentConfig } from '../config/schema.ts';
import { VERSION } from '../../shared/version.ts';
import { DriverConnection } from './connection.ts';
import { staticAccountsForHello } from './hello.ts';
import { driverLink, setDriverLink, type DriverLink } from './link.ts';
import type { ConnectionSettings } from './settings.ts';

/** How long stopping waits for the driver to acknowledge queued responses. */
export const FLUSH_TIMEOUT_MS = 5_000;

export function connectionSettings(config: AgentConfig): ConnectionSettings {
  return { driver: config.driver, kubernetes: { reconnectTimeoutMs: config.kubernetes.reconnectTimeoutMs }, timeoutSeconds: config.timeoutSeconds };
}

export const driverConnectionComponent: ComponentFactory = (ctx) => {
  const log = ctx.logger.child({ component: 'driver connection' });
  let welcomes = 0;
  let state: { connected: boolean; detail: string } = { connected: false, detail: 'not connected to the driver yet' };
  const config = ctx.config();
  const connection = new DriverConnection({
    settings: connectionSettings(config),
    hello: () => ({
      agentId: ctx.agentId,
      zone: ctx.zone.zoneId,
      agentVersion: VERSION,
      staticAccounts: staticAccountsForHello(
        ctx.config().kubernetes.accounts.map((a) => ({ ...a, permissions: [{ READ: a.permissions.READ, WRITE: a.permissions.WRITE }] })),
      ),
      heldAccounts: link.handler?.held() ?? [],
    }),
    onWork: (work) => {
      if (link.handler === undefined) throw new VendorError('unavailable', 'the account holder is not running');
      return link.handler.handle(work);
    },
    log,
    clock: ctx.clock,
    ...(ctx.pathTrace === undefined ? {} : { trace: ctx.pathTrace }),
    onRetry: (out) => ctx.metrics.retries.inc({ target: 'driver', account: 'account' in out.body ? String(out.body.account) : '' }),
    onState: (s) => {
      if (s.connected) {
        if (welcomes++ > 0) ctx.metrics.driverReconnects.inc();
        ctx.metrics.driverConnected.set(1);
        state = { connected: true, detail: `connected to ${config.driver.grpc} (session ${s.welcome.sessionId})` };
        link.handler?.connected({ leaseMs: s.welcome.leaseMs });
      } else {
        ctx.metrics.driverConnected.set(0);
        state = { connected: false, detail: `not connected to the driver: ${s.end.error.message}` };
        link.handler?.disconnected?.();
      }
    },
  });
  const link: DriverLink = driverLink(ctx) ?? { connection };
  setDriverLink(ctx, link);
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  return {
    name: 'driver connection',
    // The agent's stop signal is not followed: the stream must stay open until stop() has flushed
    // what the account workers sent while they stopped.
    async start() {
      ctx.readiness.set('driver', () => ({ ok: state.connected, detail: state.detail }));
      ctx.metrics.driverConnected.set(0);
      running = connection.start(stop.signal);
    },
    async stop() {
      const flushed = await connection.flush(FLUSH_TIMEOUT_MS);
      if (!flushed) log.warn({ timeoutMs: FLUSH_TIMEOUT_MS }, 'stopping with responses the driver has not acknowledged');
      stop.abort();
      await running;
      ctx.metrics.driverConnected.set(0);
      state = { connected: false, detail: 'the agent is stopping' };
    },
    onConfigChange(change) {
      const moved = change.sections.filter((s) => s === 'driver' || s === 'timeoutSeconds' || s === 'kubernetes.reconnectTimeoutMs');
      if (moved.length > 0) log.warn({ sections: moved }, 'driver connection settings take effect when the agent restarts');
    },
  };
};
