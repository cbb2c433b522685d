/**
 * A rogue with a valid credential of its own identity (zone `rogue_zone`, agent ids `rogue-*`, static
 * account names `rogue-static-*`, no accounts pinned to no zone), against the real driver (its gRPC
 * socket, every module, the table) while a well-behaved agent of another identity holds its accounts
 * on the same driver. Each claim beyond its identity is refused with PERMISSION_DENIED and a message
 * naming it, writes nothing, and sends the rogue nothing: no account of another zone, no operation
 * (docs/protocol.md, "Agent identities"). What it sends within its identity is still a peer's word: the
 * error code of its operation results is kept only when it is one of the project's codes
 * (docs/protocol.md#operations).
 */
import { status as grpcStatus, type StatusObject } from '@grpc/grpc-js';
import { describe, expect, it, vi } from 'vitest';
import { operationsWorkerFactory } from '../../agent/operations/operations-worker.ts';
import type { AgentIdentity } from '../../shared/agents/identity.ts';
import { PROTOCOL_VERSION, type AgentMessage, type DriverMessage__Output } from '../../shared/protocol/messages.ts';
import { ERROR_CODE_TRAILER } from '../../shared/protocol/wire.ts';
import { syncSource } from '../../shared/table/sources/sync.ts';
import { TTL_ATTRIBUTE } from '../../shared/table/core/schema.ts';
import { RawAgent } from '../raw-agent.ts';
import { WAIT, identityTokens, useAccountsWorld } from '../support/accounts-world.ts';
import { finished, getOperation, run, submitOperation } from '../support/operations.ts';
import { secretScanner } from '../support/secret-scanner.ts';
import { tableSnapshot } from '../support/snapshot.ts';

const GOOD_ZONE = 'good_zone';
const ROGUE_ZONE = 'rogue_zone';
const PARKED_ZONE = 'parked_zone';

const GOOD: AgentIdentity = { name: 'good', zones: [GOOD_ZONE], unzoned: true, agentIds: ['good-agent'], staticAccounts: [] };
const ROGUE: AgentIdentity = { name: 'rogue', zones: [ROGUE_ZONE], unzoned: false, agentIds: ['rogue-*'], staticAccounts: ['rogue-static-*'] };
const PARKED: AgentIdentity = { name: 'parked', zones: [PARKED_ZONE], unzoned: false, agentIds: ['parked-agent'], staticAccounts: [] };
/** An identity whose credential allows any agent id, in a zone of its own. */
const TWIN: AgentIdentity = { name: 'twin', zones: ['twin_zone'], unzoned: false, agentIds: ['*'], staticAccounts: [] };
const TOKENS = { 'good-token-0001': GOOD, 'rogue-token-0001': ROGUE, 'parked-token-0001': PARKED, 'twin-token-0001': TWIN };
const tokenOf = (identity: AgentIdentity): string => Object.entries(TOKENS).find(([, i]) => i === identity)?.[0] as string;

const world = useAccountsWorld();

/** A driver that knows the identities above, and the good agent holding `good-1` (and running operations). */
async function setUp() {
  await world.fresh([{ name: 'good-1' }, { name: 'open-1' }, { name: 'parked' }]);
  const driver = await world.driver({ authenticate: identityTokens(TOKENS) });
  const good = await world.agent('good-agent', { target: `127.0.0.1:${driver.port}`, deployment: 'good', namespace: 'zone', token: tokenOf(GOOD), workers: [operationsWorkerFactory] });
  await world.activate('good-1', GOOD_ZONE);
  await vi.waitFor(async () => expect((await world.account('good-1')).agents).toEqual([{ agentId: 'good-agent', caching: true }]), WAIT);
  // The held index follows the account's item (docs/table.md): the good agent's own entry is settled
  // before the table is taken as the state the rogue must leave alone.
  await vi.waitFor(async () => expect((await tableSnapshot(world.table)).items.has('HELD#good-agent|good-1')).toBe(true), WAIT);
  return { driver, good };
}

/** The table without the lease renewals of live sessions. */
async function guarded(): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const [key, json] of (await tableSnapshot(world.table)).items) {
    const item = JSON.parse(json) as Record<string, unknown>;
    if (key.startsWith('SESSION|')) {
      delete item.leaseExpiresAt;
      delete item.renewedAt;
      delete item.lastProcessedSeq;
      delete item[TTL_ATTRIBUTE];
    }
    out.set(key, item);
  }
  return out;
}

const hello = (agentId: string, zone: string, extra: Partial<NonNullable<AgentMessage['hello']>> = {}): AgentMessage => ({
  hello: { protocolVersion: PROTOCOL_VERSION, agentId, zone, agentVersion: '0', ...extra },
});

/** Says hello with `identity`'s credential; the stream, and its first message or how it ended. */
async function connect(port: number, identity: AgentIdentity, message: AgentMessage): Promise<{ agent: RawAgent; first?: DriverMessage__Output; status?: StatusObject }> {
  const agent = RawAgent.messages({ port, token: tokenOf(identity) });
  agent.send(message);
  try {
    return { agent, first: await agent.next() };
  } catch {
    return { agent, status: await agent.status };
  }
}

/** Connects again and again until the driver welcomes `message` (an agent id freed after the grace), kept alive from then on. */
async function welcomedOnceFree(port: number, identity: AgentIdentity, message: AgentMessage): Promise<RawAgent> {
  let welcomed: RawAgent | undefined;
  await vi.waitFor(async () => {
    const attempt = await connect(port, identity, message);
    if (attempt.first?.body !== 'welcome') {
      attempt.agent.close();
      throw new Error(`not welcomed yet: ${attempt.status?.details ?? attempt.first?.body}`);
    }
    welcomed = attempt.agent;
  }, WAIT);
  if (welcomed === undefined) throw new Error('unreachable');
  welcomed.keepAlive(200);
  return welcomed;
}

/** A heartbeat and its answer: everything the driver sent before it (the answer included) has arrived. */
async function sync(agent: RawAgent, id: number, ackSeq = 0): Promise<DriverMessage__Output[]> {
  agent.send({ ackSeq, heartbeat: { id } });
  const seen: DriverMessage__Output[] = [];
  for (;;) {
    const m = await agent.next();
    seen.push(m);
    if (m.body === 'heartbeatAck' && Number(m.heartbeatAck?.id) === id) return seen;
  }
}

/** Messages until one with `body`, that one included. */
async function until(agent: RawAgent, body: string): Promise<DriverMessage__Output[]> {
  const seen: DriverMessage__Output[] = [];
  for (;;) {
    const m = await agent.next();
    seen.push(m);
    if (m.body === body) return seen;
  }
}

const anyOf = (ms: DriverMessage__Output[], accounts: string[]) =>
  ms.filter((m) => m.body === 'operation' || (m.body === 'assignAccount' && accounts.includes(m.assignAccount?.account ?? '')));

/**
 * The rogue connected as `rogue-a` and holding `rogue-1` of its own zone, caching it: it answered the
 * assignment (its sequence number 1).
 */
async function rogueHolding(): Promise<{ driver: Awaited<ReturnType<typeof world.driver>>; rogue: RawAgent; assign: DriverMessage__Output }> {
  await world.fresh([{ name: 'rogue-1' }]);
  const driver = await world.driver({ authenticate: identityTokens(TOKENS) });
  const { agent: rogue, first } = await connect(driver.port, ROGUE, hello('rogue-a', ROGUE_ZONE));
  expect(first?.body).toBe('welcome');
  rogue.keepAlive(200);
  await world.activate('rogue-1', ROGUE_ZONE);
  const assign = (await until(rogue, 'assignAccount')).at(-1) as DriverMessage__Output;
  rogue.send({ seq: 1, ackSeq: assign.seq, assignmentResult: { account: 'rogue-1', generation: assign.assignAccount?.generation, ok: true, message: 'connected' } });
  await vi.waitFor(async () => expect((await world.account('rogue-1')).agents).toEqual([{ agentId: 'rogue-a', caching: true }]), WAIT);
  return { driver, rogue, assign };
}

describe('a rogue holding a credential of its own identity', () => {
  it('is refused at hello when it claims another zone, another agent id, or a driver account as a static account; nothing is written', async () => {
    const { driver } = await setUp();
    const goodSession = driver.sessions()[0]?.id;
    const before = await guarded();
    const claims: [AgentMessage, string, RegExp][] = [
      [hello('rogue-a', GOOD_ZONE), 'zone', /^hello refused: identity rogue may not serve zone "good_zone"$/],
      [hello('good-agent', ROGUE_ZONE), 'agentId', /^hello refused: identity rogue may not use agent id "good-agent"$/],
      [
        hello('rogue-a', ROGUE_ZONE, { staticAccounts: [{ name: 'rogue-static-1' }, { name: 'good-1' }] }),
        'staticAccounts',
        /^hello refused: identity rogue may not define static account "good-1" \(driver-defined: "good-1"\)$/,
      ],
    ];
    for (const [message, claim, text] of claims) {
      const logsBefore = world.driverLogs.lines.length;
      const { agent, first, status } = await connect(driver.port, ROGUE, message);
      agent.close();
      expect(first, `welcomed despite claiming ${claim}`).toBeUndefined();
      expect(status?.code).toBe(grpcStatus.PERMISSION_DENIED);
      expect(status?.details).toMatch(text);
      expect(status?.metadata.get(ERROR_CODE_TRAILER)).toEqual(['forbidden']);
      expect(world.driverLogs.lines.slice(logsBefore)).toContainEqual(expect.objectContaining({ identity: 'rogue', refused: claim, msg: expect.stringMatching(/^agent stream ended: hello refused/) }));
    }
    expect(await guarded()).toEqual(before);
    expect(driver.sessions().map((s) => s.id)).toEqual([goodSession]);
    // The refusals name identities and claims, never a credential.
    secretScanner(Object.fromEntries(Object.entries(TOKENS).map(([token, identity]) => [`${identity.name} token`, token]))).assertClean(world.driverLogs.text(), 'driver log');
    expect(await world.account('good-1')).toMatchObject({ agents: [{ agentId: 'good-agent', caching: true }] });
  });

  it('may not take an agent id bound to another identity while its session lives, nor after the grace feed its cache or finish its operations', async () => {
    const { driver } = await setUp();
    // `parked`: its agent confirmed it, caches it, and took an operation; then it went.
    const parked = (await connect(driver.port, PARKED, hello('parked-agent', PARKED_ZONE))).agent;
    await world.activate('parked', PARKED_ZONE);
    const assign = (await until(parked, 'assignAccount')).at(-1) as DriverMessage__Output;
    parked.send({ seq: 1, ackSeq: assign.seq, assignmentResult: { account: 'parked', generation: assign.assignAccount?.generation, ok: true, message: 'connected' } });
    await vi.waitFor(async () => expect((await world.account('parked')).agents).toEqual([{ agentId: 'parked-agent', caching: true }]), WAIT);
    const submitted = await submitOperation(world.app, 'parked', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }], replicas: 2 });
    expect(submitted.status).toBe(202);
    const op = (await until(parked, 'operation')).at(-1) as DriverMessage__Output;
    parked.send({ ackSeq: op.seq, ack: {} });

    // While the parked agent's session lives, its id is its identity's.
    const before = await guarded();
    const early = await connect(driver.port, TWIN, hello('parked-agent', 'twin_zone'));
    early.agent.close();
    expect(early.status?.code).toBe(grpcStatus.PERMISSION_DENIED);
    expect(early.status?.details).toBe('hello refused: agent id "parked-agent" belongs to another identity until its session has ended and the hand-over grace has passed');
    expect(world.driverLogs.lines).toContainEqual(expect.objectContaining({ identity: 'twin', refused: 'bound', boundTo: 'parked' }));
    expect(await guarded()).toEqual(before);

    // Gone past the grace: the id is free for an identity whose credential allows it, in its own zone.
    parked.close();
    const twin = await welcomedOnceFree(driver.port, TWIN, hello('parked-agent', 'twin_zone'));
    const record = await world.record('parked');
    // Nobody else could take the role over: the item still names the parked agent id.
    expect(record).toMatchObject({ cachingAgentId: 'parked-agent' });
    const epoch = record?.cachingEpoch ?? 0;
    twin.send({
      seq: 1,
      resourceEvents: {
        account: 'parked',
        cachingEpoch: epoch,
        changes: [{ group: '', kind: 'ConfigMap', namespace: 'default', name: 'planted', resourceVersion: '1', deleted: false, object: '{"metadata":{"name":"planted"}}' }],
      },
    });
    twin.send({ podMetrics: { account: 'parked', cachingEpoch: epoch, readingId: 1, part: 1, last: true, namespaces: ['default'] } });
    twin.send({ seq: 2, operationResult: { operationId: submitted.json.id as string, account: 'parked', attempt: 1, ok: true, message: 'done', startedAtMs: 1, finishedAtMs: 2 } });
    // Both reliable messages are taken (acknowledged) and dropped; the stream stays.
    const seen: DriverMessage__Output[] = [];
    let beat = 0;
    await vi.waitFor(async () => {
      seen.push(...(await sync(twin, ++beat)));
      expect(Math.max(...seen.map((m) => Number(m.ackSeq)))).toBe(2);
    }, WAIT);
    expect(anyOf(seen, ['parked', 'good-1', 'open-1']), 'sent to the twin').toEqual([]);
    const items = [...(await tableSnapshot(world.table)).items.keys()];
    expect(items.filter((k) => k.startsWith('RESOURCE#parked|') || k.startsWith('PODMETRICS#parked|'))).toEqual([]);
    expect(await getOperation(world.app, submitted.json.id as string)).toMatchObject({ state: 'RUNNING' });
    expect(world.driverLogs.lines).toContainEqual(expect.objectContaining({ identity: 'twin', msg: 'operation result ignored: the stream may not hold the account' }));
    twin.close();
  });

  it('may not answer for an agent id it took over after the grace before a sweep dropped that id\'s entries', async () => {
    await world.fresh([{ name: 'parked' }]);
    const first = await world.driver({ authenticate: identityTokens(TOKENS), replicaId: 'first' });
    // A replica whose own sweep and full reconcile do not come round during the test: the parked
    // agent's entry outlives the grace there, as it does on any replica between two sweeps.
    const second = await world.driver({ authenticate: identityTokens(TOKENS), replicaId: 'second', assignment: { sweepIntervalMs: 600_000, fullReconcileIntervalMs: 600_000 } });
    const parked = (await connect(first.port, PARKED, hello('parked-agent', PARKED_ZONE))).agent;
    await world.activate('parked', PARKED_ZONE);
    const assign = (await until(parked, 'assignAccount')).at(-1) as DriverMessage__Output;
    const generation = assign.assignAccount?.generation;
    parked.send({ seq: 1, ackSeq: assign.seq, assignmentResult: { account: 'parked', generation, ok: true, message: 'connected' } });
    await vi.waitFor(async () => expect((await world.account('parked')).agents).toEqual([{ agentId: 'parked-agent', caching: true }]), WAIT);
    parked.close();

    const twin = await welcomedOnceFree(second.port, TWIN, hello('parked-agent', 'twin_zone'));
    const before = await world.record('parked');
    expect(before?.agents['parked-agent']).toMatchObject({ ok: true, message: 'connected', assigned: generation });
    twin.send({ seq: 1, assignmentResult: { account: 'parked', generation, ok: true, message: 'planted' } });
    const seen: DriverMessage__Output[] = [];
    let beat = 0;
    await vi.waitFor(async () => {
      seen.push(...(await sync(twin, ++beat)));
      expect(Math.max(...seen.map((m) => Number(m.ackSeq)))).toBe(1);
    }, WAIT);
    const after = await world.record('parked');
    expect(after?.lastAssignmentMsg).not.toBe('planted');
    expect(after?.agents['parked-agent']?.message).toBe('connected');
    expect(anyOf(seen, ['parked'])).toEqual([]);
    expect(world.driverLogs.lines).toContainEqual(expect.objectContaining({ identity: 'twin', msg: 'assignment result ignored: the stream may not hold the account' }));
    twin.close();
  });

  it('is refused or ignored when it writes for accounts it does not hold, and is sent nothing of them', async () => {
    const { driver } = await setUp();
    const done = await run(world.app, 'good-1', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }], replicas: 2 });
    expect(done).toMatchObject({ state: expect.stringMatching(/SUCCEEDED|FAILED/), agentId: 'good-agent' });
    const pending = await submitOperation(world.app, 'good-1', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'api' }], replicas: 3 });
    const { agent: rogue, first } = await connect(driver.port, ROGUE, hello('rogue-a', ROGUE_ZONE, { staticAccounts: [{ name: 'rogue-static-1' }], heldAccounts: [{ name: 'good-1', generation: 1, caching: true, cachingEpoch: 1 }] }));
    expect(first?.body).toBe('welcome');
    rogue.keepAlive(200);
    // What it announced holding and may not hold is taken off it.
    const removed = await until(rogue, 'removeAccount');
    expect(removed.at(-1)?.removeAccount?.account).toBe('good-1');
    // Its own static account is recorded: what its identity allows goes through.
    await vi.waitFor(async () => expect(Object.keys((await world.record('rogue-static-1'))?.defs ?? {})).toEqual(['agent:rogue-a']), WAIT);
    const epoch = (await world.record('good-1'))?.cachingEpoch ?? 0;
    const before = await guarded();
    rogue.send({ seq: 1, resourceEvents: { account: 'good-1', cachingEpoch: epoch, changes: [{ group: '', kind: 'ConfigMap', namespace: 'default', name: 'planted', resourceVersion: '1', deleted: false, object: '{}' }] } });
    rogue.send({ podMetrics: { account: 'good-1', cachingEpoch: epoch, readingId: 1, part: 1, last: true, namespaces: ['default'] } });
    rogue.send({ resumeQuery: { queryId: 1, account: 'good-1', cachingEpoch: epoch, maxAgeMs: 60_000, cluster: 'https://x' } });
    rogue.send({ seq: 2, operationResult: { operationId: done.id, account: 'good-1', attempt: 1, ok: true, message: 'planted', startedAtMs: 1, finishedAtMs: 2 } });
    rogue.send({ seq: 3, operationResult: { operationId: pending.json.id as string, account: 'good-1', attempt: 1, ok: false, message: 'planted', startedAtMs: 1, finishedAtMs: 2 } });
    const seen = await until(rogue, 'resumeInfo');
    let beat = 0;
    await vi.waitFor(async () => {
      seen.push(...(await sync(rogue, ++beat)));
      expect(Math.max(...seen.map((m) => Number(m.ackSeq)))).toBe(3);
    }, WAIT);
    expect(seen.find((m) => m.body === 'resumeInfo')?.resumeInfo).toMatchObject({ accepted: false, message: expect.stringContaining('rogue-a is not the caching agent') });
    rogue.send({ seq: 4, assignmentResult: { account: 'good-1', generation: (await world.record('good-1'))?.generation, ok: false, message: 'planted' } });
    const status = await rogue.status;
    expect(status.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(status.details).toBe('assignment result for account good-1, which was not assigned to this agent');
    expect(anyOf([...removed, ...seen, ...rogue.take()], ['good-1', 'open-1'])).toEqual([]);
    await vi.waitFor(() => expect(driver.sessions().map((s) => s.agentId)).toEqual(['good-agent']), WAIT);
    const now = await guarded();
    for (const [key, value] of before) {
      if (key.startsWith('SESSION|rogue') || key.startsWith('AGENTID|rogue') || key.startsWith('OPQUEUE#') || key.startsWith('OPERATION#')) continue;
      expect(now.get(key), key).toEqual(value);
    }
    expect([...now.keys()].filter((k) => !before.has(k) && !k.startsWith('SESSION|') && !k.startsWith('OPERATION#') && !k.startsWith('OPQUEUE#'))).toEqual([]);
    expect(await getOperation(world.app, done.id)).toEqual(done);
    expect(await getOperation(world.app, pending.json.id as string)).not.toMatchObject({ message: 'planted' });
  });

  it('is sent no account pinned to no zone, and is not elected to cache one, when its identity does not allow that', async () => {
    const { driver, good } = await setUp();
    const { agent: rogue, first } = await connect(driver.port, ROGUE, hello('rogue-a', ROGUE_ZONE));
    expect(first?.body).toBe('welcome');
    rogue.keepAlive(200);
    await world.activate('open-1');
    await vi.waitFor(async () => expect((await world.account('open-1'))).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'good-agent', caching: true }] }), WAIT);
    // The good agent goes; past the grace its entry is dropped, and the rogue is no candidate.
    await good.stop();
    await vi.waitFor(async () => expect((await world.record('open-1'))?.agents).toEqual({}), WAIT);
    const seen = await sync(rogue, 1);
    expect(anyOf(seen, ['open-1', 'good-1'])).toEqual([]);
    expect(await world.record('open-1')).toMatchObject({ cachingAgentId: 'good-agent', state: 'FAILED' });
    rogue.close();
  });

  it('keeps its static definition of a name a driver source adds later: its identity allows that name', async () => {
    const { driver } = await setUp();
    const { agent: rogue, first } = await connect(driver.port, ROGUE, hello('rogue-a', ROGUE_ZONE, { staticAccounts: [{ name: 'rogue-static-1', settings: { namespaces: ['own'] } }] }));
    expect(first?.body).toBe('welcome');
    rogue.keepAlive(200);
    await vi.waitFor(async () => expect(Object.keys((await world.record('rogue-static-1'))?.defs ?? {})).toEqual(['agent:rogue-a']), WAIT);
    await syncSource(world.table, { id: 'driver-config', kind: 'driver-config' }, [{ name: 'good-1' }, { name: 'open-1' }, { name: 'parked' }, { name: 'rogue-static-1' }], Date.now());
    expect(await world.account('rogue-static-1')).toMatchObject({ source: 'static-agent-config' });
    rogue.close();
  });
});

describe('a rogue answering the operations of an account it holds', () => {
  it('has an error code that is not a known one left out of its result, which is stored otherwise as sent; the stream stays', async () => {
    const { driver, rogue, assign } = await rogueHolding();
    let seq = 1;
    let acked = assign.seq;
    const session = driver.sessions().map((s) => s.id);

    /** An operation of the account, answered failed by the rogue with `errorCode`: its view once stored. */
    const answered = async (errorCode: string) => {
      const submitted = await submitOperation(world.app, 'rogue-1', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' }], replicas: 2 });
      expect(submitted.status).toBe(202);
      const op = (await until(rogue, 'operation')).at(-1) as DriverMessage__Output;
      acked = op.seq;
      rogue.send({ seq: ++seq, ackSeq: acked, operationResult: { operationId: op.operation?.operationId, account: 'rogue-1', attempt: op.operation?.attempt, ok: false, message: 'refused here', errorCode, outcomes: [], startedAtMs: 1, finishedAtMs: 2 } });
      return (await finished(world.app, submitted.json.id as string)) as unknown as Record<string, unknown>;
    };
    /** The view without what differs between two operations whatever their results. */
    const comparable = (view: Record<string, unknown>) => {
      const { id: _id, idempotencyKey: _key, createdAt: _created, updatedAt: _updated, dispatchedAt: _dispatched, finishedAt: _finished, ...rest } = view;
      return rest;
    };

    // A code of the project's is kept; without one there is none.
    expect(await answered('conflict')).toMatchObject({ state: 'FAILED', message: 'refused here', errorCode: 'conflict', agentId: 'rogue-a' });
    const plain = await answered('');
    expect(plain).toMatchObject({ state: 'FAILED', message: 'refused here', agentId: 'rogue-a' });
    expect(plain).not.toHaveProperty('errorCode');
    const logsBefore = world.driverLogs.lines.length;
    const hostile = ['not_a_code', 'Invalid_Input', `invalid_input ${'x'.repeat(100_000)}`];
    for (const code of hostile) expect(comparable(await answered(code)), code.slice(0, 20)).toEqual(comparable(plain));
    const dropped = world.driverLogs.lines.slice(logsBefore).filter((l) => l.msg === 'operation result taken without its error code: not one this driver knows, or on a success');
    expect(dropped.map((l) => l.errorCodeLength)).toEqual(hostile.map((c) => c.length));
    // The stream is the same one and still served.
    const seen = await sync(rogue, 1, acked);
    expect(seen.at(-1)?.body).toBe('heartbeatAck');
    expect(driver.sessions().map((s) => s.id)).toEqual(session);
    rogue.close();
  });

  it('caching its own account, has a batch naming an object the table cannot key refused whole by name; nothing of it is written and no write is retried', async () => {
    const { rogue, assign } = await rogueHolding();
    const epoch = (await world.record('rogue-1'))?.cachingEpoch ?? 0;
    const logsBefore = world.driverLogs.lines.length;
    // Each name within its own bound; together, with a name of 3-byte characters, a key of 1,147 bytes.
    const wide = { group: 'g'.repeat(253), kind: 'K'.repeat(60), namespace: 'n'.repeat(63), name: '界'.repeat(256), resourceVersion: '2', deleted: false, object: '{}' };
    const fine = { group: '', kind: 'ConfigMap', namespace: 'default', name: 'fine', resourceVersion: '1', deleted: false, object: '{}' };
    rogue.send({ seq: 2, ackSeq: assign.seq, resourceEvents: { account: 'rogue-1', cachingEpoch: epoch, changes: [fine, wide] } });
    const ended = await rogue.status;
    expect(ended.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(ended.details).toBe('malformed resourceEvents: resourceEvents.changes.1 group, kind, namespace and name together make a table key longer than 1024 bytes');
    // Named, so an agent drops that batch instead of sending it forever.
    expect(ended.metadata.get('vendor-protocol-seq')).toEqual(['2']);
    expect([...(await tableSnapshot(world.table)).items.keys()].filter((k) => k.startsWith('RESOURCE#'))).toEqual([]);
    expect(world.driverLogs.lines.slice(logsBefore).filter((l) => Number(l.level) >= 50)).toEqual([]);
    rogue.close();
  });

  it('defining more static accounts than an agent may, is refused by name at hello rather than failing inside the driver; nothing is written', async () => {
    await world.fresh([]);
    const driver = await world.driver({ authenticate: identityTokens(TOKENS) });
    const before = await guarded();
    // Names its identity allows, together past what the session's item holds (about 500 KB of names).
    const staticAccounts = Array.from({ length: 2000 }, (_, i) => ({ name: `rogue-static-${'x'.repeat(230)}-${i}` }));
    const { agent, status } = await connect(driver.port, ROGUE, hello('rogue-a', ROGUE_ZONE, { staticAccounts }));
    expect(status?.code).toBe(grpcStatus.INVALID_ARGUMENT);
    expect(status?.details).toBe('malformed hello: hello.staticAccounts holds more than 1000 accounts, the most an agent defines');
    expect(await guarded()).toEqual(before);
    agent.close();
  });
});
