/**
 * How the test API server itself holds up at cluster scale (test tooling, not a product benchmark):
 * seeds realistic objects, then times a full paged list of every kind and the delivery of a burst of
 * watch events to an all-namespaces watch. One JSON line per figure.
 *
 *   npm run bench:kube-server -- 50000
 */
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { churn, seedCluster } from './seed.ts';
import { startTestApiServer } from './server.ts';

const objects = Number(process.argv[2] ?? 50_000);
const events = Number(process.argv[3] ?? 20_000);

function emit(figure: string, value: number, unit: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ bench: 'kube-server', figure, value: Math.round(value * 10) / 10, unit, ...extra })}\n`);
}

async function getJson(url: string): Promise<{ metadata: { continue?: string }; items: unknown[]; bytes: number }> {
  const res = await fetch(url);
  const text = await res.text();
  return { ...(JSON.parse(text) as { metadata: { continue?: string }; items: unknown[] }), bytes: text.length };
}

const server = await startTestApiServer({ maxRevisions: 100_000, bookmarkIntervalMs: 0 });
let t = performance.now();
const seeded = await seedCluster(server.store, { objects, namespaces: 50 });
emit('seed', performance.now() - t, 'ms', { objects, created: seeded.created });
emit('rss_after_seed', process.memoryUsage().rss / 1048576, 'MiB');

const kinds = ['/api/v1/pods', '/apis/apps/v1/replicasets', '/apis/apps/v1/deployments', '/api/v1/services', '/api/v1/configmaps', '/api/v1/secrets', '/api/v1/serviceaccounts', '/apis/apps/v1/statefulsets', '/apis/apps/v1/daemonsets', '/apis/batch/v1/jobs'];
t = performance.now();
let listed = 0;
let bytes = 0;
let pages = 0;
for (const path of kinds) {
  let cont = '';
  do {
    const page = await getJson(`${server.url}${path}?limit=500${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`);
    listed += page.items.length;
    bytes += page.bytes;
    pages++;
    cont = page.metadata.continue ?? '';
  } while (cont !== '');
}
emit('paged_list_all_kinds', performance.now() - t, 'ms', { objects: listed, pages, mib: Math.round(bytes / 1048576) });

// The writer and the reader share this process, so the writer yields often enough for the reader to keep up.
const delivered = await new Promise<{ n: number; ms: number }>((resolve, reject) => {
  const req = request(`${server.url}/api/v1/pods?watch=1&resourceVersion=${server.store.resourceVersion}`, (res) => {
    let n = 0;
    const lines = createInterface({ input: res });
    const done = (): void => resolve({ n, ms: performance.now() - t });
    lines.on('line', () => {
      if (++n === events) {
        res.destroy();
        done();
      }
    });
    lines.on('close', done);
    t = performance.now();
    void churn(server.store, { count: events, batch: 100 }).catch(reject);
  });
  req.on('error', reject);
  req.end();
});
emit('watch_events_delivered', delivered.n / (delivered.ms / 1000), 'events/s', { events: delivered.n, ms: Math.round(delivered.ms) });
emit('rss_end', process.memoryUsage().rss / 1048576, 'MiB');
await server.close();
