/**
 * Runs the test Kubernetes API server as its own process, for benchmarks and manual checks.
 * Test code: never part of the product. Prints one JSON line with the URL (and kubeconfig path)
 * once it is ready; the `/_test/` admin endpoints are on.
 *
 *   npm run kube:test-server -- --seed 50000 --namespaces 50 --kubeconfig /tmp/kubeconfig
 */
import { parseArgs } from 'node:util';
import { VendorError } from '../../shared/errors.ts';
import { seedCluster } from './seed.ts';
import { startTestApiServer, type TestApiServerOptions } from './server.ts';

const USAGE = `options:
  --port N                 port to bind (default: any free port)
  --host ADDR              address to bind (default 127.0.0.1)
  --tls                    serve HTTPS with a CA made at start (its PEM is printed as "ca")
  --token T                require this bearer token (repeatable)
  --token-file PATH        require the tokens of a kube-apiserver static token file
  --seed N                 create N realistic objects before reporting ready
  --namespaces N           namespaces the seeded objects are spread over (default 50)
  --max-revisions N        history kept before automatic compaction (default 20000)
  --bookmark-interval-ms N interval of watch BOOKMARK events (default 60000)
  --no-watch-list          answer watches like Kubernetes 1.20 (no WatchList)
  --no-metrics             serve no metrics.k8s.io API
  --no-compression         never gzip answers (large lists are gzipped for clients that ask, by default)
  --kubeconfig PATH        write a kubeconfig for the server to PATH
  --version X.Y.Z          Kubernetes version to report (default 1.30.0)`;

function int(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new VendorError('invalid_input', `--${name} must be a non-negative integer, got "${value}"`);
  return Number(value);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' }, host: { type: 'string' }, tls: { type: 'boolean' }, token: { type: 'string', multiple: true }, 'token-file': { type: 'string' },
      seed: { type: 'string' }, namespaces: { type: 'string' }, 'max-revisions': { type: 'string' },
      'bookmark-interval-ms': { type: 'string' }, 'no-watch-list': { type: 'boolean' }, 'no-metrics': { type: 'boolean' },
      'no-compression': { type: 'boolean' }, kubeconfig: { type: 'string' }, version: { type: 'string' }, help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const options: TestApiServerOptions = {
    admin: true,
    tls: values.tls === true,
    watchList: values['no-watch-list'] !== true,
    metricsApi: values['no-metrics'] !== true,
    compression: values['no-compression'] !== true,
  };
  const port = int(values.port, 'port');
  if (port !== undefined) options.port = port;
  if (values.host !== undefined) options.host = values.host;
  const maxRevisions = int(values['max-revisions'], 'max-revisions');
  if (maxRevisions !== undefined) options.maxRevisions = maxRevisions;
  const bookmarks = int(values['bookmark-interval-ms'], 'bookmark-interval-ms');
  if (bookmarks !== undefined) options.bookmarkIntervalMs = bookmarks;
  if (values.version !== undefined) options.kubernetesVersion = values.version;
  if (values.token !== undefined || values['token-file'] !== undefined) {
    options.auth = { tokens: Object.fromEntries((values.token ?? []).map((t, i) => [t, `user-${i}`])) };
    if (values['token-file'] !== undefined) options.auth.tokenFile = values['token-file'];
  }

  const server = await startTestApiServer(options);
  const seedCount = int(values.seed, 'seed') ?? 0;
  const started = performance.now();
  const seeded = seedCount > 0 ? await seedCluster(server.store, { objects: seedCount, namespaces: int(values.namespaces, 'namespaces') ?? 50 }) : undefined;
  const seedMs = Math.round(performance.now() - started);
  if (values.kubeconfig !== undefined) server.writeKubeconfig(values.kubeconfig);
  process.stdout.write(`${JSON.stringify({
    url: server.url,
    kubeconfig: values.kubeconfig ?? null,
    ca: server.ca ?? null,
    seeded: seeded?.created ?? {},
    seedMs,
    resourceVersion: server.store.resourceVersion,
    pid: process.pid,
  })}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n${USAGE}\n`);
  process.exit(2);
});
