import type { AgentComponent, AgentContext, ComponentFactory } from '../component.ts';
import type { AgentConfig } from '../config/schema.ts';
import { cacheStateReport, cacheStateSource } from './cache-state.ts';
import { startHealthServer } from './health.ts';
import type { RunningHttpServer } from './http-server.ts';
import { startMetricsServer } from './metrics-server.ts';
import { startProfilingServer } from './profiling.ts';

/**
 * A local endpoint that follows the configuration: started when enabled, restarted when one of its
 * sections changes on reload, stopped when disabled.
 */
function serverComponent(
  ctx: AgentContext,
  name: string,
  sections: readonly string[],
  enabled: (c: AgentConfig) => boolean,
  start: (c: AgentConfig) => Promise<RunningHttpServer>,
): AgentComponent {
  let running: RunningHttpServer | undefined;
  const log = ctx.logger.child({ component: name });
  const up = async () => {
    if (!enabled(ctx.config())) return;
    running = await start(ctx.config());
    log.info({ url: running.url }, `${name} listening`);
  };
  const down = async () => {
    await running?.close();
    running = undefined;
  };
  return {
    name,
    start: up,
    stop: down,
    async onConfigChange(change) {
      if (!change.sections.some((s) => sections.includes(s))) return;
      await down();
      try {
        await up();
      } catch (e) {
        log.error({ err: e instanceof Error ? e.message : String(e) }, `${name} could not restart with the reloaded settings`);
      }
    },
  };
}

export const healthComponent: ComponentFactory = (ctx) =>
  serverComponent(ctx, 'health server', ['server'], () => true, (c) =>
    startHealthServer(c.server, ctx.readiness, ctx.secrets, () => cacheStateReport(cacheStateSource(ctx), ctx.budget, ctx.config().tasks, ctx.clock.now())),
  );

export const metricsComponent: ComponentFactory = (ctx) =>
  serverComponent(ctx, 'metrics server', ['prometheus'], (c) => c.prometheus.enabled, (c) =>
    startMetricsServer({ registry: ctx.metrics.registry, host: c.prometheus.host, port: c.prometheus.port }),
  );

export const profilingComponent: ComponentFactory = (ctx) =>
  serverComponent(ctx, 'profiling server', ['pprof'], (c) => c.pprof.enabled, (c) =>
    startProfilingServer({ port: c.pprof.port, clock: ctx.clock, logger: ctx.logger.child({ component: 'profiling server' }) }),
  );
