import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { type Clock, systemClock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { handleAdmin } from './admin.ts';
import { KubeApi } from './api.ts';
import { ADMIN_USER, type AuthOptions, type Authorizer, resolveAuth } from './auth.ts';
import { createCertificateAuthority, type CertificateAuthority, type KeyPair } from '../support/pki.ts';
import { type FaultMatch, FaultPlan, matches } from './faults.ts';
import { createRequestHandler, type RequestRecord } from './http.ts';
import { kubeconfigDocument, type KubeconfigDocument, kubeconfigYaml, writeKubeconfigFile } from './kubeconfig.ts';
import { Lifecycle } from './lifecycle.ts';
import { PodMetrics } from './pod-metrics.ts';
import { Registry } from './registry.ts';
import { NAMESPACE_RESOURCE_KEY, resourceKey } from './resource-types.ts';
import { Store } from './store.ts';
import { TestStore } from './test-store.ts';
import { WatchHub } from './watch.ts';
import { WatchCache } from './watch-cache.ts';
import { TestFaults } from './test-faults.ts';

/**
 * A Kubernetes API server for tests and benchmarks (not product code): real HTTP(S) on loopback,
 * the Kubernetes API conventions clients depend on, an in-memory store, and knobs for faults.
 * See docs/test-api-server.md.
 */
export interface TestApiServerOptions {
  /** Address to bind; 127.0.0.1 by default. */
  host?: string;
  /** Port; 0 (any free port) by default. */
  port?: number;
  /** Serve HTTPS with a CA made for this server (exposed as `ca`). */
  tls?: boolean;
  /** Without it every request is served as an administrator and credentials are not checked. */
  auth?: AuthOptions;
  /** Decides RBAC outcomes; everything is allowed without it. */
  authorize?: Authorizer;
  /** Reported by /version; `1.30.0` by default. */
  kubernetesVersion?: string;
  /** false answers watches as Kubernetes 1.20 did (no WatchList, resourceVersionMatch refused). Default true. */
  watchList?: boolean;
  /**
   * The watch cache of every kind follows the newest revision, as a kube-apiserver whose cache
   * learns etcd's progress (1.21 on): bookmarks reach watches of kinds without new events, and a
   * version learnt from one kind can be read "not older than" on another. false answers as 1.20:
   * a kind's cache stands at its newest event (or the revision at start), so bookmarks carry that
   * version and come only once it moved, lists at "0" report it, and reads not older than a newer
   * version wait and then answer 504. Default true.
   */
  watchCacheProgress?: boolean;
  /** Interval of BOOKMARK events on watches that allow them; 60000 by default, 0 for none. */
  bookmarkIntervalMs?: number;
  /** Server-side watch timeout when the client gives none; 1800 by default. */
  defaultWatchTimeoutSeconds?: number;
  /** How long a read at a resourceVersion newer than the store waits before 504; 3000 by default. */
  tooLargeResourceVersionWaitMs?: number;
  /** Revisions of history retained before automatic compaction; 20000 by default, Infinity for all. */
  maxRevisions?: number;
  /** Serve `metrics.k8s.io/v1beta1`; true by default. */
  metricsApi?: boolean;
  /** Serve the `/_test/` admin endpoints (for a server in another process); false by default. */
  admin?: boolean;
  /** Create the namespaces and the `kubernetes` Service a new cluster has; true by default. */
  bootstrap?: boolean;
  /** Unread bytes a watcher may accumulate before the server closes it; 64 MiB by default. */
  maxWatchBufferBytes?: number;
  /**
   * Run a stand-in deployment controller: ReplicaSets per pod template with revisions, rollout status.
   * Off by default, as on a cluster without controller-manager; no pods are made either way.
   */
  deploymentController?: boolean;
  /**
   * gzip answers of 128 KiB or more (large lists) for clients that send `Accept-Encoding: gzip`, as
   * kube-apiserver does; watches are never compressed. Default true.
   */
  compression?: boolean;
  /** Requests kept in `requests.log()`; 10000 by default. */
  requestLogSize?: number;
  /** Timestamps, watch timeouts and the bookmark interval follow this clock; the system clock by default. */
  clock?: Clock;
}

export interface KubeconfigOptions {
  /** Bearer token to use; default: the first configured token. */
  token?: string;
  /** Use a client certificate for this user (TLS servers). */
  user?: { username: string; groups?: string[] };
  namespace?: string;
  /** Name of the cluster, user and context entries; `test` by default. */
  name?: string;
  /** Leave out the CA and skip verification. */
  insecureSkipTlsVerify?: boolean;
}

export interface RequestLog {
  /** Recent requests, oldest first. */
  log(): RequestRecord[];
  /** How many recent requests match (`verb: 'list', resource: 'pods'`, ...). */
  count(match?: FaultMatch): number;
  /** How many matching requests are being answered now (a watch counts until it ends). */
  inFlight(match?: FaultMatch): number;
  /** The most matching requests answered at the same time, over the recent requests. */
  peakInFlight(match?: FaultMatch): number;
  clear(): void;
}

export interface TestApiServer {
  /** `http://127.0.0.1:PORT` or `https://...`. */
  readonly url: string;
  /** PEM of the CA that signed the server certificate (TLS only). */
  readonly ca: string | undefined;
  readonly store: TestStore;
  readonly faults: TestFaults;
  readonly podMetrics: PodMetrics;
  readonly requests: RequestLog;
  kubeconfig(options?: KubeconfigOptions): KubeconfigDocument;
  kubeconfigYaml(options?: KubeconfigOptions): string;
  writeKubeconfig(path: string, options?: KubeconfigOptions): string;
  /** A client certificate signed by the server's CA: CN is the user, each O a group. */
  issueClientCertificate(username: string, groups?: string[]): KeyPair;
  /** Turns the `metrics.k8s.io` API on or off at run time. */
  setMetricsApi(enabled: boolean): void;
  /** Resolves when the emulated controllers (garbage collector, namespace and CRD lifecycle) are idle. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

function versionInfo(version: string): Record<string, string> {
  const [major = '1', minor = '30'] = version.split('.');
  return {
    major, minor, gitVersion: `v${version}`, gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean',
    buildDate: '2024-01-01T00:00:00Z', goVersion: 'go1.22.0', compiler: 'gc', platform: 'linux/amd64',
  };
}

function bootstrapCluster(store: TestStore): void {
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) store.ensureNamespace(name);
  store.create({
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] },
  });
}

export async function startTestApiServer(given: TestApiServerOptions = {}): Promise<TestApiServer> {
  const options: TestApiServerOptions = { ...given, auth: resolveAuth(given.auth) };
  const clock = options.clock ?? systemClock;
  const metricsState = { enabled: options.metricsApi ?? true };
  const registry = new Registry(metricsState);
  const store = new Store({ maxRevisions: options.maxRevisions ?? 20_000 });
  const namespaces = registry.all().find((t) => resourceKey(t) === NAMESPACE_RESOURCE_KEY);
  if (namespaces === undefined) throw new VendorError('internal', 'namespaces are not a built-in resource');
  const waitMs = options.tooLargeResourceVersionWaitMs ?? 3000;
  const cache = new WatchCache(store, options.watchCacheProgress ?? true);
  const api = new KubeApi({ store, clock, tooLargeResourceVersionWaitMs: waitMs, namespaces, cache });
  const lifecycle = new Lifecycle(api, registry, {
    deploymentController: options.deploymentController ?? false,
    // kube-apiserver ends the watches on a custom resource once its definition is gone.
    unserved: (rt) => watches.drop({ group: rt.group, resource: rt.plural }, 'end'),
  });
  api.observe(lifecycle);
  const watches = new WatchHub(store, {
    watchList: options.watchList ?? true,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    defaultTimeoutSeconds: options.defaultWatchTimeoutSeconds ?? 1800,
    tooLargeResourceVersionWaitMs: waitMs,
    maxBufferedBytes: options.maxWatchBufferBytes ?? 64 * 1024 * 1024,
    clock,
    cache,
  });
  const faultPlan = new FaultPlan();
  const testStore = new TestStore(api, registry, store, lifecycle);
  const podMetrics = new PodMetrics(clock, (ns, name) => testStore.get({ apiVersion: 'v1', kind: 'Pod', namespace: ns, name })?.metadata.labels);
  if (options.bootstrap ?? true) bootstrapCluster(testStore);
  cache.started();

  const ca: CertificateAuthority | undefined = options.tls === true ? createCertificateAuthority() : undefined;
  const host = options.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const hung = new Set<ServerResponse>();
  const logSize = options.requestLogSize ?? 10_000;
  let records: RequestRecord[] = [];
  // When each request started and ended, in one sequence, so overlaps can be counted afterwards.
  let tick = 0;
  const spans = new WeakMap<RequestRecord, { start: number; end?: number }>();
  let address = '';

  const faults = new TestFaults(faultPlan, watches, testStore, () => {
    const n = sockets.size;
    for (const s of sockets) s.destroy();
    return n;
  });
  const handler = createRequestHandler({
    registry, api, watches, faults: faultPlan, podMetrics,
    auth: options.auth, authorize: options.authorize, versionInfo: versionInfo(options.kubernetesVersion ?? '1.30.0'),
    serverAddress: () => address,
    watchListBookmark: true,
    record: (r) => {
      spans.set(r, { start: ++tick });
      records.push(r);
      if (records.length > logSize * 2) records = records.slice(-logSize);
    },
    finished: (r) => {
      const span = spans.get(r);
      if (span !== undefined && span.end === undefined) span.end = ++tick;
    },
    hung,
    clock,
    compression: options.compression ?? true,
    admin: options.admin === true
      ? (req: IncomingMessage, res: ServerResponse, url: URL) => handleAdmin({ store: testStore, faults, podMetrics, metricsState, watches }, req, res, url)
      : undefined,
  });

  let server: Server;
  if (ca !== undefined) {
    const serving = ca.issue({ commonName: 'kube-apiserver', dnsNames: ['localhost', 'kubernetes', 'kubernetes.default'], ipAddresses: ['127.0.0.1', '::1'] });
    server = createHttpsServer({ key: serving.key, cert: serving.cert, ca: [ca.cert], requestCert: true, rejectUnauthorized: false }, handler);
  } else server = createHttpServer(handler);
  server.keepAliveTimeout = 60_000;
  server.requestTimeout = 0;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new VendorError('internal', 'test API server did not bind a TCP port');
  address = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  const url = `${ca === undefined ? 'http' : 'https'}://${address}`;

  const defaultCredentials = (o: KubeconfigOptions): { token?: string; clientCertificate?: KeyPair } => {
    if (o.user !== undefined) {
      if (ca === undefined) throw new VendorError('conflict', 'client certificates need a server started with tls: true');
      return { clientCertificate: ca.issue({ commonName: o.user.username, organizations: o.user.groups ?? [] }) };
    }
    const token = o.token ?? Object.keys(options.auth?.tokens ?? {})[0];
    if (token !== undefined) return { token };
    if (options.auth?.clientCertificates === true && ca !== undefined) {
      return { clientCertificate: ca.issue({ commonName: ADMIN_USER.username, organizations: ['system:masters'] }) };
    }
    return {};
  };
  const kubeconfig = (o: KubeconfigOptions = {}): KubeconfigDocument => {
    const input: Parameters<typeof kubeconfigDocument>[0] = { server: url, credentials: defaultCredentials(o) };
    if (ca !== undefined) input.ca = ca.cert;
    if (o.name !== undefined) input.name = o.name;
    if (o.namespace !== undefined) input.namespace = o.namespace;
    if (o.insecureSkipTlsVerify !== undefined) input.insecureSkipTlsVerify = o.insecureSkipTlsVerify;
    return kubeconfigDocument(input);
  };

  return {
    url,
    ca: ca?.cert,
    store: testStore,
    faults,
    podMetrics,
    requests: {
      log: () => records.slice(-logSize),
      count: (match = {}) => records.slice(-logSize).filter((r) => matches(match, r)).length,
      inFlight: (match = {}) => records.slice(-logSize).filter((r) => matches(match, r) && spans.get(r)?.end === undefined).length,
      peakInFlight: (match = {}) => {
        const steps: [number, number][] = [];
        for (const r of records.slice(-logSize)) {
          const span = spans.get(r);
          if (span === undefined || !matches(match, r)) continue;
          steps.push([span.start, 1]);
          if (span.end !== undefined) steps.push([span.end, -1]);
        }
        let now = 0;
        let peak = 0;
        for (const [, step] of steps.sort((a, b) => a[0] - b[0])) peak = Math.max(peak, (now += step));
        return peak;
      },
      clear: () => {
        records = [];
      },
    },
    kubeconfig,
    kubeconfigYaml: (o) => kubeconfigYaml(kubeconfig(o)),
    writeKubeconfig: (path, o) => writeKubeconfigFile(path, kubeconfig(o)),
    issueClientCertificate: (username, groups = []) => {
      if (ca === undefined) throw new VendorError('conflict', 'client certificates need a server started with tls: true');
      return ca.issue({ commonName: username, organizations: groups });
    },
    setMetricsApi: (enabled) => {
      metricsState.enabled = enabled;
    },
    settled: () => lifecycle.settled(),
    close: async () => {
      watches.close();
      for (const r of hung) r.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
