/**
 * An agent without a cluster, for suites and benchmarks that need many of them: the agent's own
 * `DriverConnection` (hello, heartbeats, sequence numbers, acknowledgements, reconnects) that
 * confirms every assignment and finishes every operation at once, and keeps what the driver told its
 * current stream of each account (its hello names no held accounts, so every stream is told afresh),
 * so a test can see which accounts it caches, and ask where the driver's resume progress stands.
 */
import { DriverConnection } from '../../agent/connection/connection.ts';
import { silentLogger } from '../../shared/log.ts';
import type { ResourceChange, ResourceEvents, ResumeInfo__Output, ScopeProgress } from '../../shared/protocol/messages.ts';

export interface ProtocolAgentOptions {
  /** The driver address (`host:port`). */
  target: string;
  agentId: string;
  zone: string;
  token: string;
  /** `kubernetes.reconnectTimeoutMs` (1,000 by default). */
  reconnectTimeoutMs?: number;
}

export interface HeldAccount {
  generation: number;
  caching: boolean;
  cachingEpoch: number;
}

export class ProtocolAgent {
  readonly id: string;
  readonly connection: DriverConnection;
  readonly #held = new Map<string, HeldAccount>();
  readonly #answers = new Map<number, (info: ResumeInfo__Output) => void>();
  readonly #stop = new AbortController();
  #nextQuery = 1;
  /** Operations finished, by id. */
  readonly operations = new Set<string>();

  constructor(options: ProtocolAgentOptions) {
    this.id = options.agentId;
    const connection: DriverConnection = new DriverConnection({
      settings: {
        driver: { grpc: options.target, insecure: true, auth: { token: options.token } },
        kubernetes: { reconnectTimeoutMs: options.reconnectTimeoutMs ?? 1000 },
      },
      hello: () => ({ agentId: options.agentId, zone: options.zone, agentVersion: 'protocol-agent' }),
      onWork: (w) => {
        if (w.kind === 'assignAccount') {
          const b = w.body;
          this.#held.set(b.account, { generation: Number(b.generation), caching: b.caching, cachingEpoch: Number(b.cachingEpoch) });
          void connection.respond({ kind: 'assignmentResult', body: { account: b.account, generation: b.generation, ok: true, message: 'protocol agent' } }).catch(() => undefined);
        } else if (w.kind === 'removeAccount') {
          this.#held.delete(w.body.account);
        } else if (w.kind === 'resumeInfo') {
          this.#answers.get(Number(w.body.queryId))?.(w.body);
        } else if (w.kind === 'operation') {
          const { operationId, account, attempt } = w.body;
          const at = Date.now();
          this.operations.add(operationId);
          const body = { operationId, account, attempt, ok: true, message: 'protocol agent', outcomes: [], startedAtMs: at, finishedAtMs: at, budgetWaitMs: 0 };
          void connection.respond({ kind: 'operationResult', body }).catch(() => undefined);
        }
      },
      onState: (state) => {
        if (state.connected) this.#held.clear();
      },
      log: silentLogger(),
    });
    this.connection = connection;
    void connection.start(this.#stop.signal);
  }

  get connected(): boolean {
    return this.connection.connected;
  }

  /** The accounts the driver last told this agent to cache. */
  caching(): string[] {
    return [...this.#held].filter(([, h]) => h.caching).map(([name]) => name);
  }

  held(account: string): HeldAccount | undefined {
    return this.#held.get(account);
  }

  /** Asks where the driver's resume progress of `account` stands for `cluster`, at the caching epoch held. */
  resume(account: string, cluster: string): Promise<ResumeInfo__Output> {
    const queryId = this.#nextQuery++;
    const answered = new Promise<ResumeInfo__Output>((resolve) => this.#answers.set(queryId, resolve));
    const cachingEpoch = this.#held.get(account)?.cachingEpoch ?? 0;
    if (!this.connection.notify({ kind: 'resumeQuery', body: { queryId, account, cachingEpoch, maxAgeMs: 600_000, cluster } })) {
      return Promise.reject(new Error(`${this.id} is not connected`));
    }
    return answered;
  }

  /** Sends cache progress for `account` as its caching agent, made under the resume answer `queryId`. */
  progress(account: string, queryId: number, progress: ScopeProgress[]): Promise<void> {
    const body: ResourceEvents = { account, cachingEpoch: this.#held.get(account)?.cachingEpoch ?? 0, progress, resumeQueryId: queryId };
    return this.connection.respond({ kind: 'resourceEvents', body });
  }

  /** Sends changes of `account` as its caching agent, at the caching epoch held; resolves once the driver acknowledged them. */
  changes(account: string, changes: ResourceChange[]): Promise<void> {
    const body: ResourceEvents = { account, cachingEpoch: this.#held.get(account)?.cachingEpoch ?? 0, changes };
    return this.connection.respond({ kind: 'resourceEvents', body });
  }

  /** Ends the stream for good, as a pod that goes away. */
  stop(): void {
    this.#stop.abort();
  }
}
