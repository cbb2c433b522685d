/**
 * The process-fault scenario (docs/reliability.md): a seeded random run of what operators and the
 * world do to the system at once. Accounts are registered, activated and deleted, and operations
 * submitted, through the HTTP API; driver replicas and agents are killed (SIGKILL) and started again
 * at random points; the test API server changes objects and drops watches. `settle()` then starts
 * what is down, waits for the system to come to rest and reports every way it differs from what is
 * true:
 *
 * - every account's `state`, `agents[]`, caching role and `lastAssignmentMsg` against what it was
 *   asked to be and what the agents themselves say they hold; exactly one caching agent per ACTIVE
 *   account, and the agents agree on which;
 * - every operation ended once (terminal, and at most one driver line saying it finished) and took
 *   effect once in the cluster (one create of its ConfigMap, and no write after the one it reports;
 *   a Deployment's generation moved once per restart);
 * - no secret (tokens, the kubeconfig) in any line of any process, any API answer or any error;
 * - no process died on its own, and the API answered no 5xx.
 */
import { BUILT_IN_KINDS } from '../../resource-cache-harness.ts';
import { ScenarioWorld, type Holding } from './world.ts';

export interface ScenarioOptions {
  seed: number;
  drivers: number;
  /** Zones (`<deployment>_<namespace>`) and how many agents each has. */
  zones: readonly { zone: string; agents: number }[];
  accounts: number;
  /**
   * How often faults come, from 0 to 1: the share of steps that kill a process or drop watches is
   * this times its share at 1 (the default); the rest of those steps do nothing. A soak of hours wants
   * fewer kills than a run of seconds.
   */
  faultRate?: number;
  /** Processes never killed (by name), so that a long run shows whether they grow. */
  immortal?: readonly string[];
  /** How long an operation may take before it ends TIMED_OUT (`timeoutSeconds` of each request). */
  operationTimeoutSeconds?: number;
  /** Where the embedded table runs: in this process (default) or in one of its own. */
  table?: 'inline' | 'process';
  /** Whether the API wakes the driver replicas when it writes work for them (docs/protocol.md#6b-wakes); off by default. */
  wakes?: boolean;
  /** Told of notable moments (the soak prints them). */
  onEvent?: (event: Record<string, unknown>) => void;
}

type Desired = 'none' | 'registered' | 'active' | 'deleted';

interface AccountState {
  name: string;
  zone: string;
  desired: Desired;
  /** The Deployment `web-<name>` was deployed by a SUCCEEDED operation. */
  web: 'none' | 'asked' | 'deployed';
  /** Operations of this account not finished yet. */
  open: number;
}

type OperationKind = 'configmap' | 'web' | 'restart' | 'removal';

interface TrackedOperation {
  id: string;
  account: string;
  kind: OperationKind;
  /** The object it changes. */
  target: string;
  submittedAt: number;
  state?: string;
}

/** A small seeded generator (mulberry32): the same seed makes the same choices. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const OPS_NAMESPACE = 'ops';
const CHURN_NAMESPACE = 'churn';
const FINISHED = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT']);
/** How often an activation is read back until it is ACTIVE (the resolution of its lag). */
const ACTIVATION_POLL_MS = 10;
const CONNECTED = /^connected to https:\/\/127\.0\.0\.1:\d+ \(Kubernetes v[\w.+-]+\)$/;

export interface ScenarioCounts {
  steps: number;
  registrations: number;
  activations: number;
  /** PATCHes answered 409: no live agent in the zone at that moment. */
  activationRefusals: number;
  deletions: number;
  operations: number;
  /** Operations refused with 409: the account was not ACTIVE at that moment. */
  operationRefusals: number;
  driverKills: number;
  agentKills: number;
  watchDrops: number;
  clusterChanges: number;
}

export class Scenario {
  readonly world = new ScenarioWorld();
  readonly counts: ScenarioCounts = {
    steps: 0,
    registrations: 0,
    activations: 0,
    activationRefusals: 0,
    deletions: 0,
    operations: 0,
    operationRefusals: 0,
    driverKills: 0,
    agentKills: 0,
    watchDrops: 0,
    clusterChanges: 0,
  };
  /** Problems found while running (unexpected answers, operations that did not take effect once). */
  readonly problems: string[] = [];
  /** Milliseconds from a PATCH to the account ACTIVE with an agent, and from an operation's submission to its end. */
  readonly lag = { activation: [] as number[], operation: [] as number[] };
  readonly #options: ScenarioOptions;
  readonly #random: () => number;
  readonly #accounts: AccountState[] = [];
  readonly #operations = new Map<string, TrackedOperation>();
  readonly #background = new Set<Promise<unknown>>();
  readonly #restarts = new Set<Promise<void>>();
  #opSeq = 0;
  #churnSeq = 0;
  /** ConfigMaps operations created and no operation deletes yet: what removals pick from, so the cluster does not only grow. */
  readonly #configMaps: string[] = [];
  #stopping = false;

  constructor(options: ScenarioOptions) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
    const zones = options.zones.map((z) => z.zone);
    for (let i = 0; i < options.accounts; i++) this.#accounts.push({ name: `acc-${i}`, zone: zones[i % zones.length] as string, desired: 'none', web: 'none', open: 0 });
  }

  get operations(): readonly TrackedOperation[] {
    return [...this.#operations.values()];
  }

  async start(): Promise<void> {
    const { world } = this;
    await world.start(this.#accounts.map((a) => a.name), this.#options.table ?? 'inline', this.#options.wakes ?? false);
    world.kube.store.ensureNamespace(OPS_NAMESPACE);
    world.kube.store.ensureNamespace(CHURN_NAMESPACE);
    for (let i = 1; i <= this.#options.drivers; i++) world.addDriver(`driver-${i}`);
    await Promise.all([...world.drivers.keys()].map((d) => world.startDriver(d)));
    for (const { zone, agents } of this.#options.zones) for (let i = 1; i <= agents; i++) world.addAgent({ id: `agent-${zone.split('_')[0]}-${i}`, zone });
    await Promise.all([...world.agents.keys()].map((a) => world.startAgent(a)));
  }

  async close(): Promise<void> {
    this.#stopping = true;
    await Promise.allSettled([...this.#restarts]);
    await this.world.close();
  }

  #pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.#random() * items.length)];
  }

  #between(min: number, max: number): number {
    return min + Math.floor(this.#random() * (max - min));
  }

  #track(work: Promise<unknown>): void {
    this.#background.add(work);
    void work.finally(() => this.#background.delete(work));
  }

  #event(event: Record<string, unknown>): void {
    this.#options.onEvent?.({ at: new Date().toISOString(), ...event });
  }

  #problem(text: string): void {
    this.world.scan('a problem the scenario reports', text);
    this.problems.push(text);
    this.#event({ event: 'problem', problem: text.slice(0, 500) });
  }

  /** One random action; most take a moment, kills and restarts go on in the background. */
  async step(): Promise<void> {
    this.counts.steps++;
    const roll = this.#random();
    if (roll < 0.18) await this.#register();
    else if (roll < 0.36) await this.#activate();
    else if (roll < 0.44) await this.#delete();
    else if (roll < 0.7) await this.#operate();
    else if (roll < 0.8) this.#changeCluster();
    else {
      // Faults: kills and dropped watches, thinned out by faultRate.
      const due = this.#random() < (this.#options.faultRate ?? 1);
      const which = this.#random();
      if (due && which < 0.3) this.#killDriver();
      else if (due && which < 0.7) this.#killAgent();
      else if (due) this.#dropWatches();
    }
    await new Promise((r) => setTimeout(r, this.#between(20, 200)));
  }

  async #register(): Promise<void> {
    const a = this.#pick(this.#accounts.filter((x) => x.desired === 'none' || x.desired === 'deleted'));
    if (a === undefined) return;
    const r = await this.world.call('POST', '/vendor/accounts', [{ name: a.name, zoneId: a.zone, kubeconfigFile: this.world.kubeconfigFile(a.name) }]);
    if (r.status !== 200) return this.#problem(`POST ${a.name}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    a.desired = 'registered';
    this.counts.registrations++;
  }

  async #activate(): Promise<void> {
    const a = this.#pick(this.#accounts.filter((x) => x.desired === 'registered'));
    if (a === undefined) return;
    const started = Date.now();
    const r = await this.world.call('PATCH', '/vendor/accounts', [{ name: a.name, state: 'ACTIVE' }]);
    if (r.status === 409) {
      this.counts.activationRefusals++;
      this.#event({ event: 'activation refused', account: a.name, detail: r.json.detail });
      return;
    }
    if (r.status !== 200) return this.#problem(`PATCH ${a.name}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    a.desired = 'active';
    this.counts.activations++;
    this.#track(this.#timeActivation(a, started));
  }

  async #timeActivation(a: AccountState, started: number): Promise<void> {
    while (!this.#stopping && a.desired === 'active' && Date.now() - started < 60_000) {
      const r = await this.world.call('GET', `/vendor/accounts/${a.name}`);
      if (r.json.state === 'ACTIVE' && Array.isArray(r.json.agents) && r.json.agents.length > 0) {
        this.lag.activation.push(Date.now() - started);
        return;
      }
      // The lag is read at this resolution: a coarser poll would add up to its interval to every figure.
      await new Promise((res) => setTimeout(res, ACTIVATION_POLL_MS));
    }
  }

  async #delete(): Promise<void> {
    // Accounts with operations in flight are left alone, so that those end as they should.
    const a = this.#pick(this.#accounts.filter((x) => (x.desired === 'active' || x.desired === 'registered') && x.open === 0));
    if (a === undefined) return;
    const r = await this.world.call('DELETE', `/vendor/accounts/${a.name}`);
    if (r.status !== 200) return this.#problem(`DELETE ${a.name}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    a.desired = 'deleted';
    a.web = a.web === 'deployed' ? 'deployed' : 'none';
    this.counts.deletions++;
  }

  async #operate(): Promise<void> {
    const a = this.#pick(this.#accounts.filter((x) => x.desired === 'active'));
    if (a === undefined) return;
    const n = ++this.#opSeq;
    let kind: OperationKind = 'configmap';
    let target = `op-${n}`;
    let body: Record<string, unknown> = { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: target, namespace: OPS_NAMESPACE }, data: { n: String(n) } }] };
    if (a.web === 'none' && this.#random() < 0.5) {
      kind = 'web';
      target = `web-${a.name}`;
      body = {
        action: 'deploy',
        manifests: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: target, namespace: OPS_NAMESPACE },
            spec: { selector: { matchLabels: { app: target } }, template: { metadata: { labels: { app: target } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
          },
        ],
      };
    } else if (a.web === 'deployed' && this.#random() < 0.5) {
      kind = 'restart';
      target = `web-${a.name}`;
      body = { action: 'rolloutRestart', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: OPS_NAMESPACE, name: target }] };
    } else if (this.#configMaps.length > 15 && this.#random() < 0.5) {
      kind = 'removal';
      target = this.#configMaps.splice(Math.floor(this.#random() * this.#configMaps.length), 1)[0] as string;
      body = { action: 'delete', targets: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: OPS_NAMESPACE, name: target }] };
    }
    body.timeoutSeconds = this.#options.operationTimeoutSeconds ?? 60;
    const submittedAt = Date.now();
    const r = await this.world.call('POST', `/vendor/accounts/${a.name}/operations`, body, { 'Idempotency-Key': `scenario-${this.#options.seed}-${n}` });
    if (r.status === 409) {
      this.counts.operationRefusals++;
      return;
    }
    if (r.status !== 202 && r.status !== 200) return this.#problem(`POST operation on ${a.name}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    const op: TrackedOperation = { id: r.json.id as string, account: a.name, kind, target, submittedAt };
    this.#operations.set(op.id, op);
    if (kind === 'web') a.web = 'asked';
    a.open++;
    this.counts.operations++;
    this.#track(this.#follow(op, a));
  }

  /** Waits for the operation's end (long polls of `?wait`), then checks it took effect once. */
  async #follow(op: TrackedOperation, a: AccountState): Promise<void> {
    try {
      for (;;) {
        const r = await this.world.call('GET', `/vendor/operations/${op.id}?wait=30`);
        if (r.status !== 200) return this.#problem(`GET operation ${op.id}: ${r.status}`);
        const state = String(r.json.state);
        if (!FINISHED.has(state)) {
          if (this.#stopping) return;
          continue;
        }
        op.state = state;
        this.lag.operation.push(Date.now() - op.submittedAt);
        this.#checkEffect(op, r.json);
        if (op.kind === 'web') a.web = state === 'SUCCEEDED' ? 'deployed' : 'none';
        return;
      }
    } finally {
      a.open--;
    }
  }

  #checkEffect(op: TrackedOperation, view: Record<string, unknown>): void {
    if (op.state !== 'SUCCEEDED') {
      this.#problem(`operation ${op.id} (${op.kind} ${op.target} on ${op.account}) ended ${String(op.state)}: ${String(view.message ?? '')}`);
      return;
    }
    if (op.kind !== 'configmap' && op.kind !== 'removal') return;
    const writes = this.world.kube.requests.log().filter((q) => q.resource === 'configmaps' && q.name === op.target && q.verb !== 'get' && q.verb !== 'list' && q.verb !== 'watch');
    const live = this.world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: OPS_NAMESPACE, name: op.target });
    if (op.kind === 'removal') {
      // Deleted once; a second attempt finds it gone (404, `absent`).
      const deleted = writes.filter((q) => q.verb === 'delete' && q.code === 200).length;
      if (deleted !== 1 || live !== undefined) this.#problem(`ConfigMap ${op.target} of removal ${op.id}: deleted ${deleted} times, ${live === undefined ? 'gone' : 'still there'}`);
      return;
    }
    const created = writes.filter((q) => q.code === 201).length;
    if (created !== 1) this.#problem(`ConfigMap ${op.target} of operation ${op.id} was created ${created} times`);
    const outcome = (view.outcomes as { resourceVersion?: string }[] | undefined)?.[0];
    if (live === undefined || live.metadata.resourceVersion !== outcome?.resourceVersion) {
      this.#problem(`ConfigMap ${op.target} of operation ${op.id} is at ${String(live?.metadata.resourceVersion)}, the operation reported ${String(outcome?.resourceVersion)}`);
    } else {
      this.#configMaps.push(op.target);
    }
  }

  /** Kills a driver replica, and starts it again a moment later. */
  #mortal(name: string): boolean {
    return !(this.#options.immortal ?? []).includes(name);
  }

  #killDriver(): void {
    const name = this.#pick([...this.world.drivers].filter(([n, p]) => p.running && this.#mortal(n)).map(([n]) => n));
    if (name === undefined) return;
    this.counts.driverKills++;
    this.#event({ event: 'kill', process: name });
    this.#restart(this.world.killDriver(name), this.#between(200, 3_000), () => this.world.startDriver(name));
  }

  #killAgent(): void {
    const id = this.#pick(this.world.liveAgents().filter((a) => this.#mortal(a)));
    if (id === undefined) return;
    this.counts.agentKills++;
    this.#event({ event: 'kill', process: id });
    this.#restart(this.world.killAgent(id), this.#between(200, 3_000), () => this.world.startAgent(id));
  }

  #restart(killed: Promise<void>, afterMs: number, start: () => Promise<void>): void {
    const work = killed.then(async () => {
      await new Promise((r) => setTimeout(r, afterMs));
      if (!this.#stopping) await start();
    });
    this.#restarts.add(work);
    void work.finally(() => this.#restarts.delete(work));
  }

  /** Objects the agents do not operate on change under them: created, changed, deleted. */
  #changeCluster(): void {
    const { store } = this.world.kube;
    this.counts.clusterChanges++;
    const name = `churn-${this.#between(0, 20)}`;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: CHURN_NAMESPACE, name };
    const existing = store.get(ref);
    if (existing === undefined) store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: CHURN_NAMESPACE }, data: { v: String(++this.#churnSeq) } });
    else if (this.#random() < 0.7) store.patch(ref, { data: { v: String(++this.#churnSeq) } });
    else store.delete(ref);
  }

  #dropWatches(): void {
    this.counts.watchDrops++;
    this.world.kube.faults.dropWatches(undefined, this.#random() < 0.5 ? 'end' : 'destroy');
  }

  /**
   * Runs steps until `ms` have passed. At least one driver replica and one agent are killed at a
   * random moment of the run, whatever the steps chose.
   */
  async runFor(ms: number): Promise<void> {
    const start = Date.now();
    const end = start + ms;
    const forced = [
      { at: start + this.#between(0, ms), kill: () => this.#killDriver() },
      { at: start + this.#between(0, ms), kill: () => this.#killAgent() },
    ];
    while (Date.now() < end) {
      for (const f of forced.filter((x) => x.at <= Date.now())) {
        forced.splice(forced.indexOf(f), 1);
        f.kill();
      }
      await this.step();
    }
  }

  /**
   * Starts everything that is down, waits for the operations to end and the accounts to settle
   * (up to `timeoutMs`), and returns every difference from what is true.
   */
  async settle(timeoutMs: number): Promise<string[]> {
    const { world } = this;
    await Promise.allSettled([...this.#restarts]);
    world.kube.faults.clear();
    for (const [name, p] of world.drivers) if (!p.running) await world.startDriver(name);
    for (const [id, p] of world.agents) if (!p.running) await world.startAgent(id);
    const deadline = Date.now() + timeoutMs;
    // At least one account active at the end, so that there is always a cache to compare.
    while (!this.#accounts.some((a) => a.desired === 'active') && Date.now() < deadline) {
      await this.#register();
      await this.#activate();
    }
    while (this.#background.size > 0 && Date.now() < deadline) await Promise.race([Promise.allSettled([...this.#background]), new Promise((r) => setTimeout(r, 500))]);
    let differences = await this.accountDifferences();
    while (differences.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      differences = await this.accountDifferences();
    }
    const problems = [...this.problems, ...differences, ...this.#operationDifferences(), ...this.#processDifferences()];
    for (const f of world.secretFindings) problems.push(`secret "${f.secret}" (${f.form}) in ${f.where}`);
    return problems;
  }

  /** `Kind.group|namespace/name` → resourceVersion of every object of the cluster, as the cache keys them. */
  #clusterObjects(): Map<string, string> {
    const out = new Map<string, string>();
    for (const k of BUILT_IN_KINDS) {
      const group = k.apiVersion.includes('/') ? (k.apiVersion.split('/')[0] as string) : '';
      for (const o of this.world.kube.store.list({ apiVersion: k.apiVersion, kind: k.kind })) {
        const ns = o.metadata.namespace ?? '';
        out.set(`${group === '' ? k.kind : `${k.kind}.${group}`}|${ns === '' ? '' : `${ns}/`}${o.metadata.name ?? ''}`, o.metadata.resourceVersion ?? '');
      }
    }
    return out;
  }

  /** The account's cached resources as the API serves them (every page), keyed like `#clusterObjects`. */
  async #cachedObjects(account: string): Promise<Map<string, string> | string> {
    const out = new Map<string, string>();
    let cursor: string | undefined;
    do {
      const r = await this.world.call('GET', `/vendor/accounts/${account}/resources?limit=1000${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      if (r.status !== 200) return `GET resources: ${r.status}`;
      for (const i of r.json.items as { apiVersion: string; kind: string; namespace?: string; name: string; resourceVersion: string }[]) {
        const group = i.apiVersion.includes('/') ? (i.apiVersion.split('/')[0] as string) : '';
        out.set(`${group === '' ? i.kind : `${i.kind}.${group}`}|${i.namespace === undefined || i.namespace === '' ? '' : `${i.namespace}/`}${i.name}`, i.resourceVersion);
      }
      cursor = r.json.nextCursor as string | undefined;
    } while (cursor !== undefined);
    return out;
  }

  /** Cached objects found equal to the cluster's in the last comparison, over every active account. */
  cacheCompared = 0;

  /** How the cached resources of an account differ from the cluster; empty when they are the same. */
  async #cacheDifference(account: string, cluster: Map<string, string>): Promise<string | undefined> {
    const cached = await this.#cachedObjects(account);
    if (typeof cached === 'string') return cached;
    this.cacheCompared += cached.size;
    const missing = [...cluster.keys()].filter((k) => !cached.has(k));
    const extra = [...cached.keys()].filter((k) => !cluster.has(k));
    const stale = [...cluster].filter(([k, rv]) => cached.has(k) && cached.get(k) !== rv).map(([k]) => k);
    if (missing.length + extra.length + stale.length === 0) return undefined;
    const some = (keys: string[]) => `${keys.length}${keys.length > 0 ? ` (${keys.slice(0, 3).join(', ')})` : ''}`;
    return `cached resources differ from the cluster's: ${some(missing)} missing, ${some(extra)} extra, ${some(stale)} at another resourceVersion`;
  }

  /** How the accounts differ from what they were asked to be and what the agents hold. */
  async accountDifferences(): Promise<string[]> {
    const { world } = this;
    const out: string[] = [];
    const cluster = this.#clusterObjects();
    this.cacheCompared = 0;
    for (const a of this.#accounts) {
      const r = await world.call('GET', `/vendor/accounts/${a.name}`);
      if (r.status !== 200) {
        out.push(`GET ${a.name}: ${r.status}`);
        continue;
      }
      const view = r.json;
      const entries = (Array.isArray(view.agents) ? view.agents : []) as { agentId: string; caching: boolean }[];
      const listed = entries.map((e) => e.agentId).sort();
      const holders = [...world.holdings].filter(([, held]) => held.has(a.name)).map(([id]) => id).sort();
      const say = (what: string) => out.push(`${a.name} (asked ${a.desired}, zone ${a.zone}): ${what}`);
      if (a.desired !== 'active') {
        const state = a.desired === 'registered' ? 'INACTIVE' : undefined;
        if (view.state !== state) say(`state ${String(view.state)}, expected ${String(state)}`);
        if (listed.length > 0) say(`agents[] ${listed.join(',')}, expected none`);
        if (holders.length > 0) say(`held by ${holders.join(',')}, expected by none`);
        continue;
      }
      const zoneAgents = world.liveAgents(a.zone).sort();
      if (view.state !== 'ACTIVE') say(`state ${String(view.state)}`);
      if (listed.join(',') !== zoneAgents.join(',')) say(`agents[] ${listed.join(',')}, expected ${zoneAgents.join(',')}`);
      if (holders.join(',') !== zoneAgents.join(',')) say(`held by ${holders.join(',')}, expected ${zoneAgents.join(',')}`);
      const caching = entries.filter((e) => e.caching).map((e) => e.agentId);
      if (caching.length !== 1) say(`${caching.length} caching agents in agents[]`);
      const cachingHolders = holders.filter((id) => (world.holdings.get(id)?.get(a.name) as Holding).caching);
      if (cachingHolders.join(',') !== caching.join(',')) say(`agents caching by their own word: ${cachingHolders.join(',')}; by agents[]: ${caching.join(',')}`);
      if (typeof view.lastAssignmentMsg !== 'string' || !CONNECTED.test(view.lastAssignmentMsg)) say(`lastAssignmentMsg ${JSON.stringify(view.lastAssignmentMsg)}`);
      const cache = await this.#cacheDifference(a.name, cluster);
      if (cache !== undefined) say(cache);
    }
    return out;
  }

  #operationDifferences(): string[] {
    const out: string[] = [];
    for (const op of this.#operations.values()) {
      if (op.state === undefined) out.push(`operation ${op.id} (${op.kind} ${op.target}) has not ended`);
      const lines = this.world.finishedLines.get(op.id) ?? 0;
      if (lines > 1) out.push(`operation ${op.id} was finished ${lines} times by the drivers`);
    }
    // A restart rolls the Deployment once: its generation moves by one for each.
    for (const a of this.#accounts) {
      const target = `web-${a.name}`;
      const live = this.world.kube.store.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: OPS_NAMESPACE, name: target });
      if (live === undefined) continue;
      const restarts = [...this.#operations.values()].filter((o) => o.kind === 'restart' && o.target === target);
      const succeeded = restarts.filter((o) => o.state === 'SUCCEEDED').length;
      const generation = Number(live.metadata.generation ?? 0);
      // Re-deploying the same manifest changes nothing; restarts that did not succeed may or may not have applied.
      if (generation - 1 < succeeded || generation - 1 > restarts.length) {
        out.push(`Deployment ${target}: generation ${generation} after ${succeeded} restarts that succeeded of ${restarts.length}`);
      }
    }
    return out;
  }

  #processDifferences(): string[] {
    const out: string[] = [];
    for (const p of [...this.world.drivers.values(), ...this.world.agents.values()]) {
      for (const c of p.crashes) {
        const how = c.signal === null ? `exit code ${String(c.code)}` : `signal ${c.signal}`;
        const shown = (c.stderr.length > 0 ? c.stderr : c.lines).join(' | ').slice(-4_000);
        out.push(`${p.name} (incarnation ${c.incarnation}) exited on its own (${how}); last ${c.stderr.length > 0 ? 'error output' : 'lines'}: ${shown}`);
      }
    }
    if ((this.world.errors.get('api') ?? 0) > 0) out.push(`the API logged ${String(this.world.errors.get('api'))} errors`);
    return out;
  }
}
