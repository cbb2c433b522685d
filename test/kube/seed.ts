import { randomBytes } from 'node:crypto';
import { frozenJson, type JsonObject, type KubeObject } from './objects.ts';
import { isStatusError } from './status.ts';
import type { ObjectInput, TestStore } from './test-store.ts';

/**
 * Realistic cluster content for benchmarks and scale tests: workloads with their replica sets and
 * pods (owner references wired), services, config maps, secrets, service accounts, stateful sets,
 * daemon sets and jobs, spread over many namespaces, each object about the size a real cluster
 * serves (pods ~5 KB with managedFields and status, workloads ~3 KB, configs ~1-2 KB).
 */
export interface SeedOptions {
  /** Total objects to create (namespaces not counted). */
  objects: number;
  /** Namespaces to spread them over; 50 by default. */
  namespaces?: number;
  /** Namespace name prefix; `bench-` by default. */
  namespacePrefix?: string;
  /** Where the pods' five-digit name suffixes come from: random hex digits by default. */
  podSuffix?: () => string;
}

export interface SeedResult {
  namespaces: string[];
  /** Objects created per kind. */
  created: Record<string, number>;
  resourceVersion: number;
}

/** Share of each kind in the seeded objects, in percent. */
const MIX: readonly [string, number][] = [
  ['Deployment', 8], ['ReplicaSet', 15], ['Pod', 40], ['Service', 8], ['ConfigMap', 12],
  ['Secret', 7], ['ServiceAccount', 3], ['StatefulSet', 3], ['DaemonSet', 2], ['Job', 2],
];

const hex = (n: number): string => randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);
const TIME = '2024-05-01T10:00:00Z';

function labels(app: string, extra: Record<string, string> = {}): Record<string, string> {
  return { app, 'app.kubernetes.io/name': app, 'app.kubernetes.io/part-of': 'shop', team: 'payments', ...extra };
}

function managed(manager: string, operation: string, fields: JsonObject): JsonObject {
  return { manager, operation, apiVersion: 'v1', time: TIME, fieldsType: 'FieldsV1', fieldsV1: fields };
}

function container(name: string, image: string): JsonObject {
  return {
    name, image,
    ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' }, { name: 'PORT', value: '8080' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'db', key: 'url' } } },
      { name: 'FEATURE_FLAGS', value: 'checkout-v2,fast-search' },
    ],
    resources: { limits: { cpu: '500m', memory: '512Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    readinessProbe: { httpGet: { path: '/ready', port: 8080, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    volumeMounts: [{ name: 'config', mountPath: '/etc/app' }, { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
}

function podSpec(app: string): JsonObject {
  return {
    containers: [container(app, `registry.example.com/shop/${app}:1.4.${app.length}`), container('proxy', 'registry.example.com/mesh/proxy:2.1.0')],
    volumes: [
      { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
      { name: 'kube-api-access', projected: { defaultMode: 420, sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ] } },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: app,
    securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000 },
    schedulerName: 'default-scheduler',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
  };
}

function template(app: string): JsonObject {
  return { metadata: { labels: labels(app), annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' } }, spec: podSpec(app) };
}

const WORKLOAD_FIELDS: JsonObject = {
  'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:team': {} } },
  'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': {}, 'f:resources': {} } } } } },
};

function workload(kind: string, apiVersion: string, ns: string, name: string, app: string, extraSpec: JsonObject = {}, owner?: KubeObject): ObjectInput {
  const meta: JsonObject = { name, namespace: ns, labels: labels(app), annotations: { 'deployment.kubernetes.io/revision': '3', 'example.com/owner': 'team-payments' } };
  if (owner !== undefined) {
    meta.ownerReferences = [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }];
  }
  meta.managedFields = [managed('deployer', 'Apply', WORKLOAD_FIELDS), managed('kube-controller-manager', 'Update', { 'f:status': { 'f:replicas': {}, 'f:readyReplicas': {} } })];
  return {
    apiVersion, kind, metadata: meta,
    spec: { replicas: 3, selector: { matchLabels: { app } }, template: template(app), ...extraSpec },
    status: { replicas: 3, readyReplicas: 3, availableReplicas: 3, observedGeneration: 1 },
  };
}

function pod(ns: string, name: string, app: string, owner: KubeObject | undefined, i: number): ObjectInput {
  const meta: JsonObject = {
    name, generateName: `${name.slice(0, name.lastIndexOf('-') + 1)}`, namespace: ns,
    labels: labels(app, { 'pod-template-hash': hex(10) }),
    annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090', 'kubectl.kubernetes.io/restartedAt': TIME },
  };
  if (owner !== undefined) {
    meta.ownerReferences = [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name ?? '', uid: owner.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }];
  }
  meta.managedFields = [
    managed('kube-controller-manager', 'Update', { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"x"}': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:env': {}, 'f:image': {}, 'f:ports': {} } } } }),
    managed('kubelet', 'Update', { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {} } }, 'f:containerStatuses': {}, 'f:podIP': {}, 'f:startTime': {} } }),
  ];
  const ip = `10.244.${i % 250}.${(i >> 8) % 250}`;
  const status = {
    phase: 'Running',
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: TIME })),
    hostIP: `172.16.0.${i % 200}`,
    podIP: ip,
    podIPs: [{ ip }],
    startTime: TIME,
    containerStatuses: ['app', 'proxy'].map((c) => ({
      name: c, ready: true, restartCount: 0, started: true,
      state: { running: { startedAt: TIME } },
      image: `registry.example.com/shop/${c}:1.4.0`,
      imageID: `registry.example.com/shop/${c}@sha256:${hex(64)}`,
      containerID: `containerd://${hex(64)}`,
    })),
    qosClass: 'Burstable',
  };
  return { apiVersion: 'v1', kind: 'Pod', metadata: meta, spec: { ...podSpec(app), nodeName: `node-${i % 20}` }, status };
}

function simple(kind: string, ns: string, name: string, app: string, i: number): ObjectInput {
  const metadata = { name, namespace: ns, labels: labels(app), annotations: { 'example.com/owner': 'team-payments' } };
  switch (kind) {
    case 'Service':
      return {
        apiVersion: 'v1', kind, metadata,
        spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }, { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' }], type: 'ClusterIP', sessionAffinity: 'None' },
      };
    case 'ConfigMap':
      return {
        apiVersion: 'v1', kind, metadata,
        data: {
          'app.yaml': `server:\n  port: 8080\n  shutdownGraceSeconds: 20\nlogging:\n  level: info\n  format: json\nfeatures:\n  checkoutV2: true\n  search: fast\nupstreams:\n${Array.from({ length: 12 }, (_, k) => `  - name: upstream-${k}\n    url: http://svc-${k}.${ns}.svc.cluster.local:80\n    timeoutMs: ${500 + k * 10}\n`).join('')}`,
          'revision': String(i),
        },
      };
    case 'Secret':
      return { apiVersion: 'v1', kind, metadata, type: 'Opaque', data: { url: Buffer.from(`postgres://app:${hex(24)}@db.${ns}:5432/app`).toString('base64'), token: Buffer.from(hex(64)).toString('base64') } };
    default:
      return { apiVersion: 'v1', kind: 'ServiceAccount', metadata, secrets: [{ name: `${name}-token-${hex(5)}` }] };
  }
}

function counts(total: number): Map<string, number> {
  const out = new Map<string, number>();
  let assigned = 0;
  for (const [kind, pct] of MIX) {
    const n = Math.floor((total * pct) / 100);
    out.set(kind, n);
    assigned += n;
  }
  out.set('Pod', (out.get('Pod') ?? 0) + total - assigned);
  return out;
}

/** Creates the objects through the test store (events flow to any open watch). Yields between batches. */
export async function seedCluster(store: TestStore, options: SeedOptions): Promise<SeedResult> {
  const nsCount = Math.max(1, options.namespaces ?? 50);
  const prefix = options.namespacePrefix ?? 'bench-';
  const namespaces = Array.from({ length: nsCount }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
  for (const ns of namespaces) store.ensureNamespace(ns);
  const plan = counts(options.objects);
  const created: Record<string, number> = {};
  let made = 0;
  const bump = async (kind: string): Promise<void> => {
    created[kind] = (created[kind] ?? 0) + 1;
    if (++made % 1000 === 0) await new Promise((r) => setImmediate(r));
  };
  const nsOf = (i: number): string => namespaces[i % nsCount] ?? 'default';
  const deployments: KubeObject[] = [];
  for (let i = 0; i < (plan.get('Deployment') ?? 0); i++) {
    deployments.push(store.create(workload('Deployment', 'apps/v1', nsOf(i), `app-${i}`, `app-${i}`)));
    await bump('Deployment');
  }
  const replicaSets: KubeObject[] = [];
  for (let i = 0; i < (plan.get('ReplicaSet') ?? 0); i++) {
    const owner = deployments.length === 0 ? undefined : deployments[i % deployments.length];
    const ns = owner?.metadata.namespace ?? nsOf(i);
    const app = owner?.metadata.name ?? `app-${i}`;
    replicaSets.push(store.create(workload('ReplicaSet', 'apps/v1', ns, `${app}-${hex(10)}`, app, {}, owner)));
    await bump('ReplicaSet');
  }
  // Five random hex digits, as a ReplicaSet names its pods, repeat within a large seed: drawn again then.
  const podNames = new Set<string>();
  const suffix = options.podSuffix ?? (() => hex(5));
  const podName = (ns: string, prefix: string): string => {
    for (;;) {
      const name = `${prefix}-${suffix()}`;
      if (!podNames.has(`${ns}/${name}`)) {
        podNames.add(`${ns}/${name}`);
        return name;
      }
    }
  };
  for (let i = 0; i < (plan.get('Pod') ?? 0); i++) {
    const owner = replicaSets.length === 0 ? undefined : replicaSets[i % replicaSets.length];
    const ns = owner?.metadata.namespace ?? nsOf(i);
    const app = owner?.metadata.labels?.app ?? `app-${i}`;
    store.create(pod(ns, podName(ns, owner?.metadata.name ?? app), app, owner, i));
    await bump('Pod');
  }
  for (const kind of ['Service', 'ConfigMap', 'Secret', 'ServiceAccount']) {
    for (let i = 0; i < (plan.get(kind) ?? 0); i++) {
      store.create(simple(kind, nsOf(i), `${kind.toLowerCase()}-${i}`, `app-${i}`, i));
      await bump(kind);
    }
  }
  const others: [string, string, JsonObject][] = [
    ['StatefulSet', 'apps/v1', { serviceName: 'db' }],
    ['DaemonSet', 'apps/v1', {}],
  ];
  for (const [kind, apiVersion, extra] of others) {
    for (let i = 0; i < (plan.get(kind) ?? 0); i++) {
      const obj = workload(kind, apiVersion, nsOf(i), `${kind.toLowerCase()}-${i}`, `${kind.toLowerCase()}-${i}`, extra);
      if (kind === 'DaemonSet') delete (obj.spec as JsonObject).replicas;
      store.create(obj);
      await bump(kind);
    }
  }
  for (let i = 0; i < (plan.get('Job') ?? 0); i++) {
    const app = `job-${i}`;
    const tpl = template(app);
    (tpl.spec as JsonObject).restartPolicy = 'Never';
    store.create({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: app, namespace: nsOf(i), labels: labels(app) },
      spec: { backoffLimit: 4, completions: 1, parallelism: 1, template: tpl },
      status: { succeeded: 1, startTime: TIME, completionTime: TIME },
    });
    await bump('Job');
  }
  return { namespaces, created, resourceVersion: store.resourceVersion };
}

export interface ChurnOptions {
  /** Updates to make. */
  count: number;
  /** Kinds to touch (apiVersion/kind pairs); pods by default. */
  kinds?: { apiVersion: string; kind: string }[];
  /** Updates between yields to the event loop; 500 by default. */
  batch?: number;
  /**
   * Asked after each batch: while it says the watchers are too far behind, churn waits (polling every
   * millisecond) instead of piling up more for them. Without it churn runs flat out.
   */
  behind?: () => boolean;
}

export interface ChurnResult {
  updated: number;
  fromResourceVersion: number;
  toResourceVersion: number;
}

/**
 * The objects the last churn of a store left, as it left them (parsed and frozen), and the store's
 * resourceVersion then: a churn that finds the store unchanged since goes on from them instead of
 * parsing every object again (a benchmark's bursts then measure the watch path, not the parsing of
 * 20,000 pods by the load generator).
 */
const lastChurn = new WeakMap<TestStore, { kinds: string; resourceVersion: number; targets: (KubeObject | string)[] }>();

/** Makes `count` MODIFIED events by updating an annotation and status of existing objects in turn. */
export async function churn(store: TestStore, options: ChurnOptions): Promise<ChurnResult> {
  const kinds = options.kinds ?? [{ apiVersion: 'v1', kind: 'Pod' }];
  const kindsKey = JSON.stringify(kinds.map((k) => [k.apiVersion, k.kind]));
  const last = lastChurn.get(store);
  // Parsed when first updated rather than all up front: the updates start at once, and what a
  // short churn never reaches is never parsed.
  const targets: (KubeObject | string)[] =
    last !== undefined && last.kinds === kindsKey && last.resourceVersion === store.resourceVersion ? last.targets : kinds.flatMap((k) => store.listJson(k));
  lastChurn.delete(store);
  const from = store.resourceVersion;
  const batch = options.batch ?? 500;
  let updated = 0;
  if (targets.length === 0) return { updated, fromResourceVersion: from, toResourceVersion: from };
  for (let i = 0; i < options.count; i++) {
    const slot = i % targets.length;
    const target = targets[slot];
    if (target === undefined) break;
    const current = typeof target === 'string' ? freezeUnchurned(JSON.parse(target) as KubeObject) : target;
    const annotations = { ...current.metadata.annotations, 'example.com/heartbeat': String(from + i) };
    const status = { ...(current.status as JsonObject | undefined), observedGeneration: i };
    try {
      targets[slot] = store.replace(current, { ...current, metadata: { ...current.metadata, annotations }, status });
    } catch (e) {
      if (!isStatusError(e)) throw e;
      // Changed or deleted by someone else meanwhile: take the stored state and go on.
      const fresh = store.get({ apiVersion: current.apiVersion, kind: current.kind, namespace: current.metadata.namespace ?? '', name: current.metadata.name ?? '' });
      if (fresh !== undefined) targets[slot] = freezeUnchurned(fresh);
      continue;
    }
    updated++;
    if (updated % batch === 0) {
      await new Promise((r) => setImmediate(r));
      while (options.behind?.() === true) await new Promise((r) => setTimeout(r, 1));
    }
  }
  lastChurn.set(store, { kinds: kindsKey, resourceVersion: store.resourceVersion, targets });
  return { updated, fromResourceVersion: from, toResourceVersion: store.resourceVersion };
}

/**
 * Freezes the parts of `obj` churn never changes (all but the annotations, the resourceVersion and
 * the status' observedGeneration): each update then shares them with the last one, and the store
 * serializes them once instead of once per event.
 */
function freezeUnchurned(obj: KubeObject): KubeObject {
  for (const [k, v] of Object.entries(obj)) if (k !== 'metadata' && k !== 'status') frozenJson(v);
  for (const [k, v] of Object.entries(obj.metadata)) if (k !== 'annotations' && k !== 'resourceVersion') frozenJson(v);
  const status = obj.status;
  if (status !== null && typeof status === 'object' && !Array.isArray(status)) {
    for (const [k, v] of Object.entries(status)) if (k !== 'observedGeneration') frozenJson(v);
  }
  return obj;
}
