import { describe, expect, it } from 'vitest';
import { refusal } from '../../test/refusal.ts';
import { agentProtocol } from './loader.ts';
import type { AgentMessage, DriverMessage } from './messages.ts';
import fc from 'fast-check';
import { kindHealthFits, MAX_HEALTH_KINDS, parseAgentMessage, parseDriverMessage, resourceChangeProblem } from './validate.ts';
import { MAX_ACKED_AHEAD } from './sequencing.ts';

const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
// Round-trip through the real codec so the validator sees what the wire produces.
const fromAgent = (m: AgentMessage) => parseAgentMessage(connect.requestDeserialize(connect.requestSerialize(m)));
const fromDriver = (m: DriverMessage) =>
  parseDriverMessage(connect.responseDeserialize(connect.responseSerialize(m)));

const hello = { protocolVersion: 1, agentId: 'agent-1', zone: 'vendor-agent_infra' };

describe('parseAgentMessage', () => {
  it('turns a valid hello into an envelope naming its body', () => {
    const env = fromAgent({ hello: { ...hello, staticAccounts: [{ name: 'prod' }] } });
    expect(env.kind).toBe('hello');
    if (env.kind !== 'hello') return;
    expect(env.body.agentId).toBe('agent-1');
    expect(env.body.staticAccounts.map((a) => a.name)).toEqual(['prod']);
    expect(env.seq).toBe(0);
  });

  it('refuses a message without a body', () => {
    const err = refusal(() => fromAgent({ seq: 0 }));
    expect(err.code).toBe('protocol_error');
    expect(err.details['problem']).toBe('malformed');
    expect(err.message).toBe('message has no body');
  });

  it('refuses a number no JavaScript number holds exactly, naming where it is', () => {
    const err = refusal(() =>
      fromAgent({
        seq: 1,
        operationResult: { operationId: 'op', account: 'prod', attempt: 1, outcomes: [{ result: 'scaled', generation: '18446744073709551615' }] },
      }),
    );
    expect(err.details['problem']).toBe('malformed');
    expect(err.message).toBe('malformed operationResult: operationResult.outcomes.0.generation is larger than 2^53 - 1');
    expect(fromAgent({ seq: 1, operationResult: { operationId: 'op', account: 'prod', attempt: 1, startedAtMs: Number.MAX_SAFE_INTEGER } }).kind).toBe('operationResult');
  });

  it('names each bad field of a body', () => {
    const err = refusal(() =>
      fromAgent({ hello: { ...hello, agentId: '', staticAccounts: [{ name: 'a' }, { name: 'a' }] } }),
    );
    expect(err.details['problem']).toBe('malformed');
    expect(err.issues.map((i) => i.path)).toEqual(['hello.agentId', 'hello.staticAccounts']);
    expect(err.message).toContain('hello.agentId is required');
    expect(err.message).toContain('names an account twice');
  });

  it('requires a sequence number on reliable messages and refuses one elsewhere', () => {
    const result = { account: 'prod', generation: 1, ok: true };
    expect(fromAgent({ seq: 1, assignmentResult: result }).kind).toBe('assignmentResult');
    expect(refusal(() => fromAgent({ assignmentResult: result })).message).toBe(
      'assignmentResult must carry a sequence number',
    );
    expect(refusal(() => fromAgent({ seq: 4, heartbeat: { id: 1 } })).message).toBe(
      'heartbeat must not carry a sequence number',
    );
  });

  it('refuses a hello with more static accounts than an agent defines', () => {
    const accounts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `s-${i}` }));
    expect(fromAgent({ hello: { ...hello, staticAccounts: accounts(1000) } }).kind).toBe('hello');
    expect(refusal(() => fromAgent({ hello: { ...hello, staticAccounts: accounts(1001) } })).issues).toEqual([{ path: 'hello.staticAccounts', message: 'holds more than 1000 accounts, the most an agent defines' }]);
  });

  it('refuses a result with generation 0', () => {
    const err = refusal(() => fromAgent({ seq: 1, assignmentResult: { account: 'prod', generation: 0 } }));
    expect(err.issues).toEqual([{ path: 'assignmentResult.generation', message: 'must be at least 1' }]);
  });
});

describe('parseDriverMessage', () => {
  it('accepts a welcome and refuses one whose lease is not longer than the heartbeat', () => {
    const welcome = { sessionId: 's', driverReplicaId: 'r', protocolVersion: 1, heartbeatIntervalMs: 10, leaseMs: 30 };
    expect(fromDriver({ welcome }).kind).toBe('welcome');
    const err = refusal(() => fromDriver({ welcome: { ...welcome, leaseMs: 10 } }));
    expect(err.message).toContain('leaseMs must be longer than heartbeatIntervalMs');
  });

  it('accepts an assignment and refuses one without an account', () => {
    expect(fromDriver({ seq: 1, assignAccount: { account: 'prod', generation: 3 } }).kind).toBe('assignAccount');
    const err = refusal(() => fromDriver({ seq: 1, assignAccount: { generation: 3 } }));
    expect(err.issues[0]?.path).toBe('assignAccount.account');
  });

  it(`takes up to ${MAX_ACKED_AHEAD} acknowledgements ahead, and refuses more or ones that are no sequence number`, () => {
    expect(fromDriver({ ackSeq: 1, ackedAhead: [3, 5], ack: {} })).toMatchObject({ kind: 'ack', ackSeq: 1, ackedAhead: [3, 5] });
    expect(fromDriver({ ack: {} }).ackedAhead).toEqual([]);
    const most = Array.from({ length: MAX_ACKED_AHEAD }, (_, i) => i + 2);
    expect(fromDriver({ ackedAhead: most, ack: {} }).ackedAhead).toHaveLength(MAX_ACKED_AHEAD);
    expect(refusal(() => fromDriver({ ackedAhead: [...most, MAX_ACKED_AHEAD + 2], ack: {} })).message).toBe(
      `acked_ahead lists ${MAX_ACKED_AHEAD + 1} messages, more than ${MAX_ACKED_AHEAD}`,
    );
    expect(refusal(() => fromDriver({ ackedAhead: [0], ack: {} })).message).toBe('acked_ahead holds 0, not a sequence number');
    expect(refusal(() => fromDriver({ ackedAhead: [Number.MAX_VALUE], ack: {} })).message).toContain('not a sequence number');
  });
});

describe('operations', () => {
  const operation = { operationId: 'op-1', account: 'prod', attempt: 1, deploy: { manifests: ['{}'] } };

  it('passes an operation on whatever its fields hold: the agent refuses a bad one as that operation alone', () => {
    const env = fromDriver({ seq: 1, operation });
    expect(env.kind).toBe('operation');
    if (env.kind !== 'operation') return;
    expect(env.body.action).toBe('deploy');
    // No action, attempt 0, a time-out past 2^53 - 1: none of them is the stream's problem.
    const odd = fromDriver({ seq: 1, operation: { operationId: 'op-1', account: 'prod', attempt: 0, timeoutMs: Number.MAX_VALUE } });
    expect(odd).toMatchObject({ kind: 'operation', body: { attempt: 0, timeoutMs: 18446744073709552000 } });
    expect(odd.body).not.toHaveProperty('action', expect.anything());
    // Every other body is still held to 2^53 - 1.
    expect(refusal(() => fromDriver({ seq: 1, assignAccount: { account: 'prod', generation: Number.MAX_VALUE } })).message).toBe(
      'malformed assignAccount: assignAccount.generation is larger than 2^53 - 1',
    );
  });

  it('refuses a result with more outcomes than any operation has objects', () => {
    const result = (n: number) => ({ operationId: 'op-1', account: 'prod', attempt: 1, ok: true, outcomes: Array.from({ length: n }, (_, index) => ({ index, result: 'created' })) });
    expect(fromAgent({ seq: 1, operationResult: result(500) }).kind).toBe('operationResult');
    expect(refusal(() => fromAgent({ seq: 1, operationResult: result(501) })).issues).toEqual([{ path: 'operationResult.outcomes', message: 'has more than 500 outcomes, more than any operation has objects' }]);
  });

  it('accepts a result with outcomes and refuses one with an unnamed outcome', () => {
    const result = { operationId: 'op-1', account: 'prod', attempt: 1, ok: true, outcomes: [{ index: 0, result: 'created' }] };
    expect(fromAgent({ seq: 1, operationResult: result }).kind).toBe('operationResult');
    const err = refusal(() => fromAgent({ seq: 1, operationResult: { ...result, outcomes: [{ index: 0 }] } }));
    expect(err.issues[0]?.path).toBe('operationResult.outcomes.0.result');
  });
});

describe('resource keys', () => {
  // The largest names Kubernetes gives an object: a DNS-subdomain group and name, a DNS-label namespace.
  const largest = { group: `${'g'.repeat(61)}.${'g'.repeat(63)}.${'g'.repeat(63)}.${'g'.repeat(63)}`, kind: 'K'.repeat(63), namespace: 'n'.repeat(63), name: 'm'.repeat(253) };
  const events = (changes: object[], extra: object = {}) => fromAgent({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1, changes, ...extra } });

  it('takes the largest object Kubernetes names, and a scope of it', () => {
    expect(largest.group).toHaveLength(253);
    const env = events([{ ...largest, resourceVersion: '1', object: '{}' }], { syncs: [{ scope: largest, part: 1, keys: ['k'] }], progress: [{ scope: largest }], scopeSet: { scopes: [largest] } });
    expect(env.kind).toBe('resourceEvents');
  });

  it('refuses names whose table key is longer than the table takes, which no retry would ever write', () => {
    // 3 bytes a character: each field within its length, the key they make 1,539 bytes.
    const wide = { group: '', kind: '世'.repeat(256), namespace: '', name: '界'.repeat(256), object: '{}' };
    const err = refusal(() => events([wide]));
    expect(err.details['problem']).toBe('malformed');
    expect(err.issues).toEqual([{ path: 'resourceEvents.changes.0', message: 'group, kind, namespace and name together make a table key longer than 1024 bytes' }]);
    const scope = { group: '', kind: '世'.repeat(200), namespace: '界'.repeat(63) };
    expect(refusal(() => events([], { progress: [{ scope: { ...scope, kind: '世'.repeat(256), group: '界'.repeat(253) } }] })).issues[0]?.path).toBe('resourceEvents.progress.0.scope');
    expect(refusal(() => events([], { scopeSet: { scopes: [{ ...scope, group: '界'.repeat(200) }] } })).issues[0]?.path).toBe('resourceEvents.scopeSet.scopes.0');
  });

  it('refuses a group or namespace longer than Kubernetes allows, in changes, scopes and pod metrics, and pod metrics past a table item', () => {
    expect(refusal(() => events([{ ...largest, group: `${largest.group}g` }])).issues).toEqual([{ path: 'resourceEvents.changes.0.group', message: 'is longer than 253 characters' }]);
    expect(refusal(() => events([{ ...largest, namespace: 'n'.repeat(64) }])).issues).toEqual([{ path: 'resourceEvents.changes.0.namespace', message: 'is longer than 63 characters' }]);
    expect(refusal(() => events([], { syncs: [{ scope: { kind: 'Pod', namespace: 'n'.repeat(64) }, part: 1 }] })).issues[0]?.path).toBe('resourceEvents.syncs.0.scope.namespace');
    const metrics = (namespace: string) => fromAgent({ podMetrics: { account: 'prod', cachingEpoch: 1, readingId: 1, part: 1, namespaces: [namespace], pods: [{ namespace, name: 'p' }] } });
    expect(metrics('n'.repeat(63)).kind).toBe('podMetrics');
    expect(refusal(() => metrics('n'.repeat(64))).issues.map((i) => i.path)).toEqual(['podMetrics.namespaces.0', 'podMetrics.pods.0.namespace']);
    const pod = (over: object) => fromAgent({ podMetrics: { account: 'prod', cachingEpoch: 1, readingId: 1, part: 1, pods: [{ namespace: 'a', name: 'p', timestamp: '2026-01-02T03:04:05Z', window: '30s', ...over }] } });
    const container = { name: 'c'.repeat(63), cpu: '1234567890n', memory: '1234567890Ki' };
    expect(pod({ containers: Array.from({ length: 256 }, () => container) }).kind).toBe('podMetrics');
    expect(refusal(() => pod({ containers: Array.from({ length: 257 }, () => container) })).issues).toEqual([{ path: 'podMetrics.pods.0.containers', message: 'has more than 256 containers' }]);
    expect(refusal(() => pod({ containers: [{ ...container, memory: '9'.repeat(65) }], window: 'w'.repeat(65) })).issues.map((i) => i.path)).toEqual(['podMetrics.pods.0.window', 'podMetrics.pods.0.containers.0.memory']);
  });

  it(`takes a health report of up to ${MAX_HEALTH_KINDS} kinds named as kinds are, and refuses more, an empty kind, a kind or group too long`, () => {
    const kind = { group: largest.group, kind: 'K'.repeat(256), scopes: 1 };
    expect(events([], { health: Array.from({ length: MAX_HEALTH_KINDS }, () => kind) }).kind).toBe('resourceEvents');
    expect(refusal(() => events([], { health: Array.from({ length: MAX_HEALTH_KINDS + 1 }, () => kind) })).issues).toEqual([
      { path: 'resourceEvents.health', message: `names more than ${MAX_HEALTH_KINDS} kinds, more than a cluster serves` },
    ]);
    expect(refusal(() => events([], { health: [kind, { scopes: 1 }] })).issues[0]?.path).toBe('resourceEvents.health.1.kind');
    expect(refusal(() => events([], { health: [{ ...kind, kind: 'K'.repeat(257) }] })).issues[0]?.path).toBe('resourceEvents.health.0.kind');
    expect(refusal(() => events([], { health: [{ ...kind, group: `${largest.group}g` }] })).issues[0]?.path).toBe('resourceEvents.health.0.group');
    for (const k of [kind, { ...kind, kind: '' }, { ...kind, kind: 'K'.repeat(257) }, { ...kind, group: `${largest.group}g` }]) {
      // The agent's own test of a kind agrees with what the driver takes.
      let taken = true;
      try {
        events([], { health: [k] });
      } catch {
        taken = false;
      }
      expect(kindHealthFits(k)).toBe(taken);
    }
  });

  it('refuses a scope set with a kind whose namespaces do not fit one table item', () => {
    const scopes = (n: number) => Array.from({ length: n }, (_, i) => ({ kind: 'Pod', namespace: `${'n'.repeat(58)}${String(i).padStart(5, '0')}` }));
    expect(events([], { scopeSet: { scopes: scopes(3900) } }).kind).toBe('resourceEvents');
    expect(refusal(() => events([], { scopeSet: { scopes: scopes(4000) } })).issues).toEqual([{ path: 'resourceEvents.scopeSet.scopes', message: 'holds a kind whose namespaces are more than 262144 bytes' }]);
  });

  it("says of a change what the driver's check of the message says, whatever its characters", () => {
    // Mixed widths: 1, 2 and 3 bytes a UTF-16 unit, and pairs of 4; lengths on both sides of each bound.
    const unit = fc.oneof({ weight: 12, arbitrary: fc.constant('a') }, fc.constantFrom('é', '界', '𝔄', '.'));
    const near = (bound: number) => fc.oneof(fc.nat({ max: 40 }), fc.integer({ min: bound - 4, max: bound + 4 }));
    const text = (bound: number) => near(bound).chain((length) => fc.array(unit, { minLength: length, maxLength: length }).map((units) => units.join('')));
    const changes = fc.record({ group: text(253), kind: text(256), namespace: text(63), name: text(256), object: fc.constant('{}') });
    fc.assert(
      fc.property(changes, (c) => {
        let refused: string | undefined;
        try {
          fromAgent({ seq: 1, resourceEvents: { account: 'prod', cachingEpoch: 1, changes: [c] } });
        } catch (e) {
          refused = (e as Error).message;
        }
        const problem = resourceChangeProblem(c);
        expect(problem === undefined).toBe(refused === undefined);
        if (problem !== undefined) expect(refused).toContain(problem.split(' ')[0]);
      }),
      { seed: 1, numRuns: 2000 },
    );
  });
});
