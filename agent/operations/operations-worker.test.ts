import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { createLogger } from '../../shared/log.ts';
import { operationMessage } from '../../shared/operations/message.ts';
import type { OperationRequest } from '../../shared/operations/request.ts';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import type { AccountSettings__Output, AgentBody, Operation__Output, OperationResult } from '../../shared/protocol/messages.ts';
import type { TestApiServer } from '../../test/kube/index.ts';
import { startKubeCluster } from '../../test/support/kube-cluster.ts';
import type { HeldAccountView, WorkerHost } from '../accounts/account-worker.ts';
import type { ClusterClient } from '../clusters/index.ts';
import { createAgentMetrics } from '../observability/metrics.ts';
import { TaskBudget } from '../tasks/budget.ts';
import { OperationsWorker, TakenOperations } from './operations-worker.ts';

const logger = createLogger({ level: 'silent' });
let kube: TestApiServer;
let cluster: ClusterClient;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ kube, cluster, close } = await startKubeCluster());
  kube.store.ensureNamespace('shop');
});
afterAll(() => close());
afterEach(() => {
  kube.faults.clear();
  kube.requests.clear();
});

const settings = (over: Partial<AccountSettings__Output> = {}): AccountSettings__Output => ({
  context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [], namespaces: [], omitNamespaces: [],
  onlyNamespacedResources: false, customResourceDefinitions: [], kinds: [], omitKinds: [], clusterScopedKinds: [], onlySpinnakerManaged: false, metrics: false, maxResumableResourceAgeMs: 0,
  permissions: null, ...over,
});

/** A host that records what the worker sends the driver. */
type Sent = OperationResult & { operationId: string; startedAtMs: number; finishedAtMs: number; budgetWaitMs: number };

class RecordingHost implements WorkerHost {
  readonly results: Sent[] = [];
  #waiters: (() => void)[] = [];
  async respond(body: AgentBody): Promise<void> {
    if (body.kind === 'operationResult') this.results.push(body.body as Sent);
    for (const w of this.#waiters.splice(0)) w();
  }
  notify(): boolean {
    return true;
  }
  connected(): boolean {
    return true;
  }
  async results_(n: number): Promise<Sent[]> {
    while (this.results.length < n) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.results;
  }
}

function setup(tasks = { totalBudget: 0, budgetPerAccount: 0, queueCheckFrequencyMs: 10 }, accountSettings = settings()) {
  const host = new RecordingHost();
  const budget = new TaskBudget(tasks, { clock: systemClock, logger });
  const stop = new AbortController();
  const loop = budget.run(stop.signal);
  const account: HeldAccountView = { name: 'prod', generation: 1, settings: accountSettings, caching: false, cachingEpoch: 0, cluster, logger };
  const metrics = createAgentMetrics();
  const worker = new OperationsWorker(account, { host, budget, clock: systemClock, taken: new TakenOperations(), metrics });
  return {
    host,
    budget,
    worker,
    metrics,
    close: async () => {
      await worker.stop();
      stop.abort();
      await loop;
    },
  };
}

const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
function work(request: OperationRequest, id: string, attempt = 1) {
  const bytes = connect.responseSerialize({ seq: attempt, operation: operationMessage(id, 'prod', attempt, 0, request) });
  return { kind: 'operation' as const, seq: attempt, ackSeq: 0, ackedAhead: [], body: connect.responseDeserialize(bytes).operation as Operation__Output };
}
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'shop' }, data: { a: name } });
const deploy = (...names: string[]): OperationRequest => ({ action: 'deploy', manifests: names.map(configMap), forceConflicts: false });

describe('operations worker', () => {
  it('runs an operation and answers with its result, on kinds left out of caching too', async () => {
    const s = setup(undefined, settings({ kinds: ['pod'], omitKinds: ['configMap'] }));
    s.worker.handle(work(deploy('cm-a'), 'op-a'));
    const [result] = await s.host.results_(1);
    expect(result).toMatchObject({ operationId: 'op-a', account: 'prod', attempt: 1, ok: true, message: '1 object done' });
    expect(result?.outcomes).toEqual([expect.objectContaining({ index: 0, result: 'created', code: 201 })]);
    expect(kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-a' })).toBeDefined();
    // Counted by action and result, with its duration, once the result has gone.
    await vi.waitFor(async () => {
      const text = await s.metrics.registry.metrics();
      expect(text).toContain('vendor_agent_operations_total{type="deploy",result="success"} 1');
      expect(text).toContain('vendor_agent_operation_duration_seconds_count{type="deploy",result="success"} 1');
    });
    await s.close();
  });

  it('counts and logs an operation only after its result has been handed to the driver', async () => {
    const s = setup();
    const seen: string[] = [];
    const respond = s.host.respond.bind(s.host);
    s.host.respond = async (body) => {
      seen.push(body.kind);
      return respond(body);
    };
    const inc = s.metrics.operations.inc.bind(s.metrics.operations);
    s.metrics.operations.inc = ((...args: Parameters<typeof inc>) => {
      seen.push('counted');
      return inc(...args);
    }) as typeof inc;
    s.worker.handle(work(deploy('cm-after'), 'op-after'));
    await s.host.results_(1);
    // The result went first: counting it is no part of its path.
    await vi.waitFor(() => expect(seen).toEqual(['operationResult', 'counted']));
    await s.close();
  });

  it('never runs an id twice: a repeat while it runs changes nothing, a repeat after it finished gets the same result', async () => {
    const s = setup();
    kube.faults.latency(50, { verb: 'patch' });
    s.worker.handle(work(deploy('cm-b'), 'op-b', 1));
    s.worker.handle(work(deploy('cm-b'), 'op-b', 2));
    const [first] = await s.host.results_(1);
    expect(kube.requests.count({ verb: 'patch' })).toBe(1);
    s.worker.handle(work(deploy('cm-b'), 'op-b', 3));
    const results = await s.host.results_(2);
    expect(results[1]).toEqual(first);
    expect(kube.requests.count({ verb: 'patch' })).toBe(1);
    await s.close();
  });

  it('starts an operation that fits the budget as it is taken, not at the next queue check', async () => {
    // The queue is checked once an hour: an operation that waited for the check would not finish here.
    const s = setup({ totalBudget: 4, budgetPerAccount: 2, queueCheckFrequencyMs: 3_600_000 });
    s.worker.handle(work(deploy('cm-fits'), 'op-fits'));
    expect(s.budget.usage()).toMatchObject({ running: 1, waiting: 0 });
    const [result] = await s.host.results_(1);
    expect(result).toMatchObject({ operationId: 'op-fits', ok: true });
    await s.close();
  });

  it('keeps to tasks.totalBudget: operations wait for budget and run one after another', async () => {
    // An operation costs 2: a budget of 3 fits one at a time.
    const s = setup({ totalBudget: 3, budgetPerAccount: 0, queueCheckFrequencyMs: 5 });
    kube.faults.latency(40, { verb: 'patch' });
    for (const name of ['cm-c1', 'cm-c2', 'cm-c3']) s.worker.handle(work(deploy(name), `op-${name}`));
    expect(s.budget.usage()).toMatchObject({ running: 1, waiting: 2, total: 2 });
    const results = [...(await s.host.results_(3))].sort((a, b) => a.startedAtMs - b.startedAtMs);
    expect(results.every((r) => r.ok)).toBe(true);
    for (let i = 1; i < results.length; i++) {
      expect(results[i]!.startedAtMs).toBeGreaterThanOrEqual(results[i - 1]!.finishedAtMs);
      expect(results[i]!.budgetWaitMs).toBeGreaterThan(0);
    }
    expect(results[0]!.budgetWaitMs).toBeLessThan(results[1]!.budgetWaitMs);
    await s.close();
  });

  it('refuses an operation with a number out of range at once, with no task and no cluster request, and runs the next', async () => {
    const s = setup({ totalBudget: 2, budgetPerAccount: 0, queueCheckFrequencyMs: 5 });
    const bad = work(deploy('cm-refused'), 'op-refused');
    s.worker.handle({ ...bad, body: { ...bad.body, timeoutMs: 2 ** 64 } });
    // Answered before anything was queued: the budget never saw it.
    expect(s.budget.usage()).toMatchObject({ running: 0, waiting: 0 });
    const [refused] = await s.host.results_(1);
    expect(refused).toMatchObject({ operationId: 'op-refused', attempt: 1, ok: false, errorCode: 'invalid_input', outcomes: [], budgetWaitMs: 0, message: 'invalid_input: the operation is invalid: timeoutMs: must be at most 604800000' });
    expect(kube.requests.count()).toBe(0);
    expect(await s.metrics.registry.metrics()).toContain('vendor_agent_operations_total{type="deploy",result="failure"} 1');
    s.worker.handle(work(deploy('cm-after-refused'), 'op-after-refused'));
    const results = await s.host.results_(2);
    expect(results[1]).toMatchObject({ operationId: 'op-after-refused', ok: true });
    // A run's result carries no code of its own: its outcomes say what came of it.
    expect(results[1]!.errorCode ?? '').toBe('');
    await s.close();
  });

  it('forgets an operation stopped before it started, so it can run when handed out again', async () => {
    const s = setup({ totalBudget: 2, budgetPerAccount: 0, queueCheckFrequencyMs: 5 });
    kube.faults.latency(40, { verb: 'patch' });
    s.worker.handle(work(deploy('cm-d1'), 'op-d1'));
    s.worker.handle(work(deploy('cm-d2'), 'op-d2'));
    expect(s.budget.usage().waiting).toBe(1);
    // Let the first one start its run.
    await new Promise((r) => setImmediate(r));
    expect(s.budget.stopAccount('prod')).toBe(2);
    // The running one still reports, with what it could not do any more; the waiting one never ran.
    const [stopped] = await s.host.results_(1);
    expect(stopped).toMatchObject({ operationId: 'op-d1', ok: false });
    await vi.waitFor(async () => expect(await s.metrics.registry.metrics()).toContain('vendor_agent_operations_total{type="deploy",result="failure"} 1'));
    expect(kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cm-d2' })).toBeUndefined();
    s.worker.handle(work(deploy('cm-d2'), 'op-d2', 2));
    const results = await s.host.results_(2);
    expect(results[1]).toMatchObject({ operationId: 'op-d2', attempt: 2, ok: true });
    await s.close();
  });
});
