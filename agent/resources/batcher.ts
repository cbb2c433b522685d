/**
 * Turns the changes of every scope of one account into `ResourceEvents` messages: batches of up to
 * `maxChanges` changes (or `maxBytes`), sent as reliable responses with at most `window` awaiting the
 * driver's acknowledgement. A batch is sealed when full, or at the end of the event-loop turn that
 * filled it when there is room to send it at once; while the window is full it keeps filling until an
 * acknowledgement makes room, so batches grow under load and stay prompt when the cache is quiet. When `window` more wait behind those, `change()` returns a promise and the
 * reflectors stop reading their watches until the driver catches up: backpressure reaches the API
 * server through TCP instead of filling the agent's memory.
 *
 * Order is kept: a batch holds changes, then the syncs and progress that follow them; a change after
 * a sync starts a new batch, so the driver never applies a sync before the changes it follows.
 *
 * Every batch names the resume answer the cache had when the batch was made (`aligned()`); the
 * driver records its progress only when it gave that answer on the stream the batch arrives on
 * (agent.proto, `ResourceEvents.resume_query_id`).
 */
import type { ClusterStatus, KindHealth, ResourceChange__Output, ResourceEvents, ResourceScope__Output, ScopeProgress, ScopeSync } from '../../shared/protocol/messages.ts';
import type { WorkerHost } from '../accounts/account-worker.ts';
import type { ChangeSink } from './reflector.ts';
import { resourceChangeProblem } from '../../shared/protocol/validate.ts';

export interface BatcherOptions {
  account: string;
  cachingEpoch: number;
  host: WorkerHost;
  maxChanges?: number;
  maxBytes?: number;
  /** Messages awaiting acknowledgement at once. */
  window?: number;
  /** Keys per part of a sync. */
  maxSyncKeys?: number;
  /** A batch was dropped by the connection after all its retries: the driver's copy is incomplete. */
  onLost(error: unknown): void;
  /** Told the size of every change sent (for statistics). */
  onSent?(changes: number, bytes: number): void;
  /** Told of a change left out because the driver would refuse it (docs/protocol.md#resource-keys). */
  onLeftOut?(change: ResourceChange__Output, problem: string): void;
}

interface Batch {
  changes: ResourceChange__Output[];
  syncs: ScopeSync[];
  progress: Map<string, ScopeProgress>;
  scopeSet?: ResourceScope__Output[];
  health?: KindHealth[];
  cluster?: ClusterStatus;
  bytes: number;
  /** The resume answer the batch was made under. */
  resumeQueryId: number;
}

const scopeKey = (s: ResourceScope__Output): string => `${s.group}/${s.kind}/${s.namespace}`;

const emptyBatch = (resumeQueryId: number): Batch => ({ changes: [], syncs: [], progress: new Map(), bytes: 0, resumeQueryId });

export class Batcher implements ChangeSink {
  readonly #o: Required<Omit<BatcherOptions, 'onSent' | 'onLeftOut'>> & Pick<BatcherOptions, 'onSent' | 'onLeftOut'>;
  #open: Batch | undefined;
  readonly #sealed: Batch[] = [];
  #inFlight = 0;
  #listIds = 0;
  #resumeQueryId = 0;
  #sealScheduled = false;
  #stopped = false;
  #waiters: (() => void)[] = [];
  #idle: (() => void)[] = [];

  constructor(options: BatcherOptions) {
    this.#o = { maxChanges: 500, maxBytes: 512 * 1024, window: 4, maxSyncKeys: 5000, onSent: undefined, onLeftOut: undefined, ...options };
  }

  change(c: ResourceChange__Output, scope: ResourceScope__Output, objects: number): Promise<void> | undefined {
    // One such object would make the driver refuse the whole batch, and the agent drop it with every other change in it.
    const problem = resourceChangeProblem(c);
    if (problem !== undefined) {
      this.#o.onLeftOut?.(c, problem);
      return this.#pressure();
    }
    let batch = this.#current();
    if (batch.syncs.length > 0) {
      this.#seal();
      batch = this.#current();
    }
    batch.changes.push(c);
    batch.bytes += c.object.length + c.name.length + 32;
    batch.progress.set(scopeKey(scope), { scope, resourceVersion: c.resourceVersion, objects });
    if (batch.changes.length >= this.#o.maxChanges || batch.bytes >= this.#o.maxBytes) this.#seal();
    return this.#pressure();
  }

  sync(scope: ResourceScope__Output, resourceVersion: string, keys: readonly string[], objects: number): Promise<void> | undefined {
    const listId = ++this.#listIds;
    const parts = Math.max(1, Math.ceil(keys.length / this.#o.maxSyncKeys));
    for (let part = 1; part <= parts; part++) {
      const slice = keys.slice((part - 1) * this.#o.maxSyncKeys, part * this.#o.maxSyncKeys);
      const batch = this.#current();
      batch.syncs.push({ scope, resourceVersion, listId, part, last: part === parts, keys: slice });
      batch.bytes += slice.reduce((n, k) => n + k.length + 2, 0);
      if (part === parts) batch.progress.set(scopeKey(scope), { scope, resourceVersion, objects });
      else this.#seal();
    }
    if (this.#current().bytes >= this.#o.maxBytes) this.#seal();
    return this.#pressure();
  }

  progress(scope: ResourceScope__Output, resourceVersion: string, objects: number): void {
    this.#current().progress.set(scopeKey(scope), { scope, resourceVersion, objects });
  }

  /** Every scope the account caches now; goes in a batch of its own, after what came before. */
  scopeSet(scopes: ResourceScope__Output[]): void {
    if (this.#open !== undefined) this.#seal();
    this.#current().scopeSet = scopes;
    this.#seal();
  }

  /** The cache's health per kind and, when given, whether the cluster answers. */
  health(kinds: KindHealth[], cluster?: ClusterStatus): void {
    const batch = this.#current();
    batch.health = kinds;
    if (cluster !== undefined) batch.cluster = cluster;
  }

  /** The driver answered resume query `queryId`: what is handed in from now on is made under it. */
  aligned(queryId: number): void {
    if (this.#open !== undefined) this.#seal();
    this.#resumeQueryId = queryId;
  }

  /** Batches sealed or open but not yet acknowledged. */
  get backlog(): number {
    return this.#sealed.length + this.#inFlight + (this.#open === undefined ? 0 : 1);
  }

  /** Resolves when everything handed in so far has been acknowledged (or dropped). */
  drained(): Promise<void> {
    if (this.#open !== undefined) this.#seal();
    if (this.backlog === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops sending; waiting reflectors are released (they are being stopped too). */
  stop(): void {
    this.#stopped = true;
    this.#release();
    for (const i of this.#idle.splice(0)) i();
  }

  #current(): Batch {
    if (this.#open === undefined) {
      this.#open = emptyBatch(this.#resumeQueryId);
      if (!this.#sealScheduled) {
        this.#sealScheduled = true;
        setImmediate(() => {
          this.#sealScheduled = false;
          if (this.#open !== undefined && this.#inFlight < this.#o.window) this.#seal();
        });
      }
    }
    return this.#open;
  }

  #seal(): void {
    const batch = this.#open;
    this.#open = undefined;
    if (batch === undefined) return;
    if (batch.changes.length === 0 && batch.syncs.length === 0 && batch.progress.size === 0 && batch.scopeSet === undefined && batch.health === undefined) return;
    this.#sealed.push(batch);
    this.#pump();
  }

  #pump(): void {
    while (!this.#stopped && this.#inFlight < this.#o.window && this.#sealed.length > 0) {
      const batch = this.#sealed.shift()!;
      this.#inFlight++;
      const body: ResourceEvents = {
        account: this.#o.account,
        cachingEpoch: this.#o.cachingEpoch,
        changes: batch.changes,
        syncs: batch.syncs,
        progress: [...batch.progress.values()],
        ...(batch.scopeSet === undefined ? {} : { scopeSet: { scopes: batch.scopeSet } }),
        health: batch.health ?? [],
        ...(batch.cluster === undefined ? {} : { clusterStatus: batch.cluster }),
        resumeQueryId: batch.resumeQueryId,
      };
      this.#o.onSent?.(batch.changes.length, batch.bytes);
      this.#o.host.respond({ kind: 'resourceEvents', body }).then(
        () => this.#settled(),
        (e: unknown) => {
          this.#settled();
          if (!this.#stopped) this.#o.onLost(e);
        },
      );
    }
    this.#release();
  }

  #settled(): void {
    this.#inFlight--;
    if (this.#open !== undefined && this.#sealed.length === 0) this.#seal();
    this.#pump();
    if (this.backlog === 0) for (const i of this.#idle.splice(0)) i();
  }

  #pressure(): Promise<void> | undefined {
    if (this.#stopped || this.#sealed.length < this.#o.window) return undefined;
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  #release(): void {
    if (!this.#stopped && this.#sealed.length >= this.#o.window) return;
    for (const w of this.#waiters.splice(0)) w();
  }
}
