/**
 * The account holder as a component (holder.ts): it takes the driver's work from the connection,
 * connects each account's cluster with the agent's `kubernetes.*` settings and secret resolver,
 * and stops every worker when the agent stops, before the connection flushes what they sent, and
 * then the decoding threads its cache workers shared.
 */
import type { ComponentFactory } from '../component.ts';
import { driverLink } from '../connection/link.ts';
import { setCacheStateSource } from '../observability/cache-state.ts';
import { closeDecoderOf } from '../resources/decoder.ts';
import { AccountHolder } from './holder.ts';
import type { AccountWorkerFactory } from './account-worker.ts';
import { ACCOUNT_WORKERS } from './workers.ts';

/** The account holder with these worker factories (the agent's are `ACCOUNT_WORKERS`). */
export const accountHolderWith = (factories: readonly AccountWorkerFactory[]): ComponentFactory => (ctx) => {
  const link = driverLink(ctx);
  if (link === undefined) return undefined; // no driver connection: nothing is ever assigned
  const { connection } = link;
  const holder = new AccountHolder({
    ctx,
    host: { respond: (body) => connection.respond(body), notify: (body) => connection.notify(body), connected: () => connection.connected },
    factories,
    connect: async (spec, logger) => {
      // Loaded with the first account, not at start: @kubernetes/client-node is the largest part of
      // the agent's start-up, and the agent is ready (connected, configuration valid) without it.
      const { connectCluster } = await import('../clusters/index.ts');
      const k = ctx.config().kubernetes;
      return connectCluster(spec, {
        secrets: ctx.secrets,
        kubernetesNoProxy: k.noProxy,
        retries: k.retries,
        clock: ctx.clock,
        logger,
        onRetry: (account) => ctx.metrics.retries.inc({ target: 'kubernetes', account }),
      });
    },
  });
  link.handler = holder;
  setCacheStateSource(ctx, { suspended: () => holder.suspended, accounts: () => holder.cacheState() });
  return {
    name: 'accounts',
    async start() {},
    async stop() {
      link.handler = undefined;
      setCacheStateSource(ctx, undefined);
      await holder.stop();
      // The cache workers, all stopped now, shared the agent's decoding threads.
      await closeDecoderOf(ctx);
    },
    async onConfigChange(change) {
      if (change.sections.includes('kubernetes.assignedAccounts')) await holder.recheckAssigned();
      const { added, changed, removed } = change.accounts;
      if (added.length + changed.length + removed.length === 0) return;
      // Dropped now, announced again at the next hello, and assigned afresh with the new settings.
      await holder.dropStatic([...changed, ...removed].map((a) => a.name));
      connection.reconnect('the static accounts of vendor-agent.yml changed');
    },
  };
};

export const accountHolderComponent: ComponentFactory = accountHolderWith(ACCOUNT_WORKERS);
