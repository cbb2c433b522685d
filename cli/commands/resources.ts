/** `vendorctl resources` and `vendorctl cache`: what the caching agent of an account reports (docs/api.md#resources-cache-health-and-pod-metrics). */
import { cacheHealthSchema, resourcePageSchema, type ResourceView } from '../../shared/answers/resources.ts';
import { expectShape } from '../client.ts';
import type { Command } from '../context.ts';
import { cell, render, renderTable } from '../output.ts';

/** The largest page the resources route serves. */
const PAGE_SIZE = 1000;

const resources: Command = {
  words: ['resources'],
  args: '<account> [kind]',
  summary: 'list the cached resources of an account, every page (kind: deployment, or Deployment.apps)',
  options: [
    ['namespace', 'only this namespace'],
    ['name', 'only objects of this name'],
  ],
  arity: [1, 2],
  async run(ctx) {
    const [account, kind] = ctx.args;
    const filters = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (kind !== undefined) filters.set('kind', kind);
    if (ctx.flags.namespace !== undefined) filters.set('namespace', ctx.flags.namespace);
    if (ctx.flags.name !== undefined) filters.set('name', ctx.flags.name);
    const raw: unknown[] = [];
    const items: ResourceView[] = [];
    for (let cursor: string | undefined; ; ) {
      const query = new URLSearchParams(filters);
      if (cursor !== undefined) query.set('cursor', cursor);
      const { body } = await ctx.api.call('GET', `/vendor/accounts/${encodeURIComponent(account!)}/resources?${query}`);
      const page = expectShape(resourcePageSchema, body, 'the resources');
      raw.push(...(body as { items: unknown[] }).items);
      items.push(...page.items);
      cursor = page.nextCursor;
      if (cursor === undefined) break;
    }
    ctx.out(
      render(ctx.format, raw, () =>
        renderTable({
          columns: ['KIND', 'API VERSION', 'NAMESPACE', 'NAME', 'RESOURCE VERSION', 'UPDATED'],
          rows: items.map((r) => [r.kind, r.apiVersion, cell(r.namespace), r.name, cell(r.resourceVersion), cell(r.updatedAt)]),
        }),
      ),
    );
    return 0;
  },
};

const seconds = (ms: number | null) => (ms === null ? '-' : `${Math.round(ms / 1000)}s`);

const cache: Command = {
  words: ['cache'],
  args: '<account>',
  summary: 'show the health of an account\'s resource cache, per kind',
  options: [],
  arity: [1, 1],
  async run(ctx) {
    const { body } = await ctx.api.call('GET', `/vendor/accounts/${encodeURIComponent(ctx.args[0]!)}/cache`);
    const health = expectShape(cacheHealthSchema, body, 'the cache health');
    ctx.out(
      render(ctx.format, body, () => {
        const head = `account ${health.account}, caching agent ${cell(health.cachingAgentId)}, reported ${cell(health.reportedAt)}\n\n`;
        return (
          head +
          renderTable({
            columns: ['KIND', 'GROUP', 'WATCHING', 'OBJECTS', 'LAST EVENT', 'RELISTS', 'LAST ERROR'],
            rows: health.kinds.map((k) => [k.kind, cell(k.group), `${k.watching}/${k.scopes}`, String(k.objects), seconds(k.lastEventAgeMs), String(k.relists), cell(k.lastError)]),
          })
        );
      }),
    );
    return 0;
  },
};

export const RESOURCE_COMMANDS: readonly Command[] = [resources, cache];
