/**
 * A rogue agent: a client with a valid token that breaks the protocol on purpose, against a real
 * driver (its gRPC socket, every module, the table) while a well-behaved agent holds its accounts
 * on the same driver. Property-based (fast-check, seeded): each run is one rogue stream, of one of
 * two kinds, half and half:
 *
 * - random and mutated messages (wrong kinds, bad sequence numbers and acks, oversize fields,
 *   accounts it does not hold, results for operations never handed to it, stale generations, garbage
 *   bytes);
 * - caching runs: a valid hello, its assignments answered and their acknowledgement awaited, then
 *   cache messages (`resourceEvents`, `resumeQuery`, `podMetrics`) at the caching epochs it was given,
 *   so that they get past the epoch rule (docs/cache.md) into the writer and the table: names at and
 *   past every bound of docs/protocol.md#resource-keys, batches up to the stream's largest message and
 *   past it, hostile scopes, scope sets, health, cluster status, pod metrics and resume queries
 *   (test/support/cache-bodies.ts), for its own accounts mostly, among a few protocol mistakes.
 *
 * Checked after every run:
 *
 * - the driver answers with an error status it chose (never INTERNAL or UNKNOWN) or keeps the stream
 *   and still answers a heartbeat; it never crashes (an uncaught error fails the file);
 * - the table holds no write the rogue was not entitled to: compared with the state before, leaving
 *   out the rogue's own items (its sessions, the account of its own zone, the static accounts it
 *   announced and their index entries) and the lease renewals of the good agent's session;
 * - the rogue is sent nothing it is not entitled to: no operation, no account of another zone, no
 *   resume query accepted for an account not its own;
 * - what it cached of its own accounts is served: the account list, its accounts, their resources,
 *   cache health and pod metrics;
 * - the driver logs no error but the documented one for a cache write the table refuses for good
 *   (docs/protocol.md#resource-keys), for the rogue's own accounts, each also counted in its metric;
 * - the good agent keeps its stream and its accounts, and keeps receiving new ones.
 *
 * Whether a run's cache messages got past the epoch rule is counted by the driver's own signs (the
 * changes it took, resume queries accepted, what it wrote of the rogue's accounts) and shown with the
 * statistics; with 20 runs or more, some must have.
 *
 * The rogue holds a credential of its own identity (zone `rogue_zone`, agent ids `rogue-*`, static
 * account names `rogue-static-*` and `rs-*`, no accounts pinned to no zone; docs/protocol.md, "Agent
 * identities"), and its hellos also claim what that identity does not allow: another zone, the good
 * agent's id or the parked agent's, a driver account's name as a static account. Those are refused
 * (PERMISSION_DENIED) and change nothing; its writes for accounts it does not hold are refused or
 * ignored like every other.
 *
 * Replay a failure with the seed printed: `ROGUE_SEED=<seed> ROGUE_RUNS=<runs> npx vitest run test/reliability/rogue-agent.test.ts`.
 */
import { readHeldAccounts } from '../../shared/table/accounts/held.ts';
import { isAccountPartition, isChangePartition } from '../../shared/table/accounts/keys.ts';
import { status as grpcStatus, type StatusObject } from '@grpc/grpc-js';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import { PROTOCOL_VERSION, RELIABLE_AGENT_BODIES, type AgentBodyKind, type DriverMessage__Output } from '../../shared/protocol/messages.ts';
import { operationsWorkerFactory } from '../../agent/operations/operations-worker.ts';
import { RawAgent } from '../raw-agent.ts';
import { AGENT_TOKEN, WAIT, identityTokens, useAccountsWorld, type TestAgent } from '../support/accounts-world.ts';
import type { AgentIdentity } from '../../shared/agents/identity.ts';
import { cacheBodies, type CacheBodyKind } from '../support/cache-bodies.ts';
import { hostileString } from '../support/hostile.ts';
import { finished, run, submitOperation } from '../support/operations.ts';
import { protoFieldType, protoFields, protoMessage } from '../support/proto-arbitrary.ts';
import { tableSnapshot, type TableSnapshot } from '../support/snapshot.ts';
import { TTL_ATTRIBUTE } from '../../shared/table/core/schema.ts';

const SEED = process.env.ROGUE_SEED === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(process.env.ROGUE_SEED);
const RUNS = Number(process.env.ROGUE_RUNS ?? 100);
/** Small, so oversize messages are cheap to make. */
const MAX_MESSAGE_BYTES = 64 * 1024;

const world = useAccountsWorld();
const STATS = new Map<string, number>();
const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;

const GOOD_ZONE = 'good_zone';
const PARKED_ZONE = 'parked_zone';
const ROGUE_ZONE = 'rogue_zone';
const ROGUE_ACCOUNT = 'rogue-1';
const LIVE_ACCOUNTS = Array.from({ length: 4 }, (_, i) => `good-live-${i}`);
/** Accounts that are not the rogue's. */
const others = new Set(['good-1', 'parked', ...LIVE_ACCOUNTS]);
const ROGUE_TOKEN = 'rogue-identity-token-0001';
const GOOD_TOKEN = 'good-identity-token-0001';
const ROGUE: AgentIdentity = { name: 'rogue', zones: [ROGUE_ZONE], unzoned: false, agentIds: ['rogue-*'], staticAccounts: ['rogue-static-*', 'rs-*'] };
const GOOD: AgentIdentity = { name: 'good', zones: [GOOD_ZONE], unzoned: true, agentIds: ['good-agent'], staticAccounts: [] };

type Envelope = { seq: 'next' | 'zero' | 'repeat' | 'skip' | number; ack: 'current' | 'zero' | 'ahead' | 'back' | number; extraBody: boolean };

/** Which account a cache message names, picked when it is sent from what the rogue was given by then. */
type AccountPick = { of: 'caching' | 'held' | 'other'; index: number } | { of: 'named'; name: string };
/** The caching epoch it carries: the one its assignment gave for the account, one next to it, or any. */
type EpochPick = 'given' | 'before' | 'after' | number;

type Step =
  | { do: 'message'; kind: AgentBodyKind; body: Record<string, unknown>; envelope: Envelope }
  | { do: 'bytes'; bytes: Uint8Array }
  | { do: 'answer'; ok: boolean; message: string }
  | { do: 'sync' }
  | { do: 'cache'; kind: CacheBodyKind; account: AccountPick; epoch: EpochPick; body: Record<string, unknown>; envelope: Envelope };

interface RogueRun {
  hello: Step | undefined;
  /**
   * A caching run: after its hello the rogue answers its assignments as an agent does and waits until
   * the driver has acknowledged its answers (written them to the account items) and it holds the
   * caching role of every account it may cache (`rogue-1` of its zone, the static accounts it
   * announced), so that its cache messages meet the epoch rule at the epochs it was given.
   */
  settle: boolean;
  steps: Step[];
}

/** What one rogue stream did and got. */
interface Outcome {
  status: StatusObject | undefined;
  received: DriverMessage__Output[];
  synced: boolean;
  /** A caching run that came to hold the caching role of every account it may cache, its answers acknowledged. */
  settled: boolean;
  /** Cache messages sent after that, by kind. */
  cacheSent: Set<CacheBodyKind>;
}

/** What the rogue was last assigned of an account: whether it caches it, at which epoch. */
interface Given {
  caching: boolean;
  epoch: number;
}

const AGENT_BODY_KINDS = protoFields('AgentMessage').filter((f) => f !== 'seq' && f !== 'ackSeq') as AgentBodyKind[];

function arbitraries(known: { operationIds: string[]; goodSessionId: string }) {
  const names = fc.constantFrom('good-1', 'parked', ROGUE_ACCOUNT, 'ghost', 'rogue-static-1');
  const accountName = fc.oneof({ weight: 6, arbitrary: names }, { weight: 1, arbitrary: hostileString });
  const number = fc.oneof({ weight: 5, arbitrary: fc.nat({ max: 4 }) }, { weight: 1, arbitrary: fc.constantFrom(2 ** 32 - 1, Number.MAX_SAFE_INTEGER) });
  const positive = fc.integer({ min: 1, max: 4 });
  const rogueIds = fc.constantFrom('rogue-a', 'rogue-b');
  // Claims its identity does not allow: the other agents' ids, their zones, driver accounts' names.
  const claimedIds = fc.constantFrom('good-agent', 'parked-agent');
  const claimedZones = fc.constantFrom(GOOD_ZONE, PARKED_ZONE);
  const driverNames = fc.constantFrom('good-1', 'parked');
  const rogueId = fc.oneof({ weight: 5, arbitrary: rogueIds }, { weight: 1, arbitrary: claimedIds }, { weight: 1, arbitrary: hostileString });
  const rogueZone = fc.oneof({ weight: 5, arbitrary: fc.constant(ROGUE_ZONE) }, { weight: 1, arbitrary: claimedZones }, { weight: 1, arbitrary: fc.constantFrom('', 'other_zone') }, { weight: 1, arbitrary: hostileString });
  const staticNames = fc.constantFrom('rogue-static-1', 'rogue-static-2', 'rogue-static-3');
  const staticName = fc.oneof({ weight: 3, arbitrary: staticNames }, { weight: 1, arbitrary: driverNames }, { weight: 2, arbitrary: hostileString.map((s) => `rs-${s}`) });
  const operationIds = fc.constantFrom(...known.operationIds);
  const hints = {
    account: accountName,
    operationId: fc.oneof({ weight: 4, arbitrary: operationIds }, { weight: 1, arbitrary: hostileString }),
    generation: number,
    cachingEpoch: number,
    attempt: number,
    agentId: rogueId,
    zone: rogueZone,
    previousSessionId: fc.oneof(fc.constant(''), fc.constant(known.goodSessionId), hostileString),
    protocolVersion: fc.oneof({ weight: 8, arbitrary: fc.constant(PROTOCOL_VERSION) }, { weight: 1, arbitrary: fc.nat() }),
  };
  // Random messages, and plausible ones: the fields the driver requires are there, so the checks
  // behind them (who holds what, which generation, whose operation) are what refuses them.
  const random = (kind: AgentBodyKind) =>
    protoMessage(
      protoFieldType('AgentMessage', kind),
      kind === 'hello' ? { ...hints, staticAccounts: protoMessage('StaticAccount', { ...hints, name: staticName }), heldAccounts: protoMessage('HeldAccount', { ...hints, name: accountName }) } : hints,
    );
  const required: Partial<Record<AgentBodyKind, fc.Arbitrary<Record<string, unknown>>>> = {
    hello: fc.record({
      protocolVersion: fc.constant(PROTOCOL_VERSION),
      agentId: fc.oneof({ weight: 8, arbitrary: rogueIds }, { weight: 1, arbitrary: claimedIds }),
      zone: fc.oneof({ weight: 8, arbitrary: fc.constant(ROGUE_ZONE) }, { weight: 1, arbitrary: claimedZones }),
      staticAccounts: fc.uniqueArray(fc.record({ name: fc.oneof({ weight: 8, arbitrary: staticNames }, { weight: 1, arbitrary: driverNames }) }), { maxLength: 2, selector: (a) => a.name }),
      heldAccounts: fc.uniqueArray(fc.record({ name: names, generation: positive, caching: fc.boolean(), cachingEpoch: number }), { maxLength: 3, selector: (a) => a.name }),
    }),
    assignmentResult: fc.record({ account: names, generation: positive, message: fc.constantFrom('connected', 'GET /version: 401 Unauthorized') }),
    operationResult: fc.record({
      operationId: operationIds,
      account: names,
      attempt: positive,
      message: fc.constant('1 object done'),
      outcomes: fc.array(protoMessage('ObjectOutcome', { result: fc.constantFrom('scaled', 'failed'), message: fc.constant('') }), { maxLength: 2 }),
    }),
    resourceEvents: fc.record({ account: names }),
    resumeQuery: fc.record({ account: names }),
    podMetrics: fc.record({ account: names }),
  };
  const body = (kind: AgentBodyKind) => {
    const must = required[kind];
    if (must === undefined) return random(kind);
    const plausible = fc.tuple(random(kind), must).map(([b, r]) => ({ ...b, ...r }));
    return fc.oneof({ weight: 3, arbitrary: plausible }, { weight: 1, arbitrary: random(kind) });
  };
  const envelope: fc.Arbitrary<Envelope> = fc.record({
    seq: fc.oneof({ weight: 12, arbitrary: fc.constant('next' as const) }, { weight: 1, arbitrary: fc.constantFrom('zero' as const, 'repeat' as const, 'skip' as const) }, { weight: 1, arbitrary: number }),
    ack: fc.oneof({ weight: 12, arbitrary: fc.constant('current' as const) }, { weight: 1, arbitrary: fc.constantFrom('zero' as const, 'ahead' as const, 'back' as const) }, { weight: 1, arbitrary: number }),
    extraBody: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });
  const message = (kinds: readonly AgentBodyKind[]): fc.Arbitrary<Step> =>
    fc.constantFrom(...kinds).chain((kind) => fc.record({ do: fc.constant('message' as const), kind: fc.constant(kind), body: body(kind), envelope }));
  const hello = fc.record({
    do: fc.constant('message' as const),
    kind: fc.constant('hello' as const),
    body: body('hello'),
    envelope: fc.constant({ seq: 'next', ack: 'current', extraBody: false } satisfies Envelope),
  });
  const step: fc.Arbitrary<Step> = fc.oneof(
    { weight: 8, arbitrary: message(AGENT_BODY_KINDS.filter((k) => k !== 'hello')) },
    { weight: 1, arbitrary: message(['hello']) },
    { weight: 1, arbitrary: fc.record({ do: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 2048 }) }) },
    { weight: 3, arbitrary: fc.record({ do: fc.constant('answer' as const), ok: fc.boolean(), message: fc.oneof(fc.constant('connected'), hostileString) }) },
    { weight: 2, arbitrary: fc.constant({ do: 'sync' } as const) },
  );
  const randomRun = fc.record({
    hello: fc.option(hello, { freq: 8, nil: undefined }),
    settle: fc.constant(false),
    steps: fc.array(step, { maxLength: 10 }),
  });

  // Caching runs: a valid hello of its own identity, then hostile cache messages at the epochs it was
  // given, for its own accounts mostly, among a few protocol mistakes.
  const cachingHello = fc.record({
    do: fc.constant('message' as const),
    kind: fc.constant('hello' as const),
    body: fc.record({
      protocolVersion: fc.constant(PROTOCOL_VERSION),
      agentId: rogueIds,
      zone: fc.constant(ROGUE_ZONE),
      agentVersion: fc.constant('0'),
      staticAccounts: fc.uniqueArray(fc.record({ name: fc.constantFrom('rogue-static-1', 'rogue-static-2', 'rs-1') }), { maxLength: 2, selector: (a) => a.name }),
    }),
    envelope: fc.constant({ seq: 'next', ack: 'current', extraBody: false } satisfies Envelope),
  });
  const accountPick: fc.Arbitrary<AccountPick> = fc.oneof(
    { weight: 12, arbitrary: fc.record({ of: fc.constant('caching' as const), index: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ of: fc.constantFrom('held' as const, 'other' as const), index: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ of: fc.constant('named' as const), name: fc.oneof(fc.constantFrom('ghost', 'rogue-static-3', 'rs-2'), hostileString) }) },
  );
  const epochPick: fc.Arbitrary<EpochPick> = fc.oneof({ weight: 12, arbitrary: fc.constant('given' as const) }, { weight: 1, arbitrary: fc.constantFrom('before' as const, 'after' as const) }, { weight: 1, arbitrary: number });
  // Mostly well framed: a mistake ends the stream, and the cache messages after it would not be read.
  const cacheEnvelope = fc.oneof({ weight: 30, arbitrary: fc.constant({ seq: 'next', ack: 'current', extraBody: false } satisfies Envelope) }, { weight: 1, arbitrary: envelope });
  const cacheBody = cacheBodies(MAX_MESSAGE_BYTES);
  const cacheStep: fc.Arbitrary<Step> = fc.constantFrom<CacheBodyKind>('resourceEvents', 'resumeQuery', 'podMetrics').chain((kind) =>
    fc.record({
      do: fc.constant('cache' as const),
      kind: fc.constant(kind),
      account: accountPick,
      epoch: epochPick,
      body: fc.oneof({ weight: 10, arbitrary: cacheBody[kind] }, { weight: 1, arbitrary: random(kind) }),
      envelope: cacheEnvelope,
    }),
  );
  // The first: hostile content within every bound, for an account it caches, at the epoch given, well
  // framed; what follows may break anything.
  const validBody = cacheBodies(MAX_MESSAGE_BYTES, { within: true });
  const leadStep: fc.Arbitrary<Step> = fc.constantFrom<CacheBodyKind>('resourceEvents', 'resumeQuery', 'podMetrics').chain((kind) =>
    fc.record({
      do: fc.constant('cache' as const),
      kind: fc.constant(kind),
      account: fc.record({ of: fc.constant('caching' as const), index: fc.nat() }),
      epoch: fc.constant('given' as const),
      body: validBody[kind],
      envelope: fc.constant({ seq: 'next', ack: 'current', extraBody: false } satisfies Envelope),
    }),
  );
  const cachingRun = fc.record({
    hello: cachingHello,
    settle: fc.constant(true),
    // Syncs between them: the driver reads what came before a heartbeat before it answers, so a later
    // message that ends the stream does not take the earlier ones with it.
    steps: fc
      .tuple(leadStep, fc.array(fc.oneof({ weight: 12, arbitrary: cacheStep }, { weight: 6, arbitrary: fc.constant({ do: 'sync' } as const) }, { weight: 1, arbitrary: step }), { maxLength: 7 }))
      .map(([lead, rest]): Step[] => [lead, { do: 'sync' }, ...rest]),
  });

  return fc.oneof({ weight: 1, arbitrary: randomRun }, { weight: 1, arbitrary: cachingRun }) satisfies fc.Arbitrary<RogueRun>;
}

/**
 * Plays one run on a fresh stream and reports how it ended. `otherEpochs`: the caching epochs of
 * accounts that are not the rogue's, as the table holds them, so its cache messages for those are
 * refused for who sends them rather than for a wrong epoch.
 */
async function play(port: number, runSteps: RogueRun, otherEpochs: ReadonlyMap<string, number>): Promise<Outcome> {
  const rogue = RawAgent.bytes({ port, token: ROGUE_TOKEN });
  let status: StatusObject | undefined;
  void rogue.status.then((s) => (status = s));
  const received: DriverMessage__Output[] = [];
  const given = new Map<string, Given>();
  const cacheSent = new Set<CacheBodyKind>();
  let sent = 0;
  let peerSeq = 0;
  let peerAck = 0;
  let acked = 0;
  let heartbeat = 0;
  const seen = (m: DriverMessage__Output) => {
    received.push(m);
    if (m.seq > 0) peerSeq = Math.max(peerSeq, m.seq);
    peerAck = Math.max(peerAck, Number(m.ackSeq));
    if (m.body === 'assignAccount' && m.assignAccount !== null && m.assignAccount !== undefined) {
      const a = m.assignAccount;
      given.set(a.account, { caching: a.caching, epoch: Number(a.cachingEpoch) });
    } else if (m.body === 'removeAccount' && m.removeAccount !== null && m.removeAccount !== undefined) {
      given.delete(m.removeAccount.account);
    }
  };
  const collect = () => {
    for (const m of rogue.take()) seen(m);
  };
  const write = (kind: AgentBodyKind, body: Record<string, unknown>, e: Envelope) => {
    const reliable = RELIABLE_AGENT_BODIES.has(kind);
    const seq = e.seq === 'next' ? (reliable ? sent + 1 : 0) : e.seq === 'zero' ? 0 : e.seq === 'repeat' ? sent : e.seq === 'skip' ? sent + 2 : e.seq;
    const ackSeq = e.ack === 'current' ? peerSeq : e.ack === 'zero' ? 0 : e.ack === 'ahead' ? peerSeq + 1 : e.ack === 'back' ? Math.max(0, acked - 1) : e.ack;
    if (e.seq === 'next' && reliable) sent = seq;
    if (typeof ackSeq === 'number') acked = Math.max(acked, ackSeq);
    // A second body: the decoder keeps one of the two.
    const second = e.extraBody ? { [kind === 'heartbeat' ? 'ack' : 'heartbeat']: {} } : {};
    rogue.send(connect.requestSerialize({ seq, ackSeq, [kind]: body, ...second }));
  };
  /** A heartbeat and its answer (the driver answers heartbeats as they arrive): the stream is still served, or it ended. */
  const sync = async (): Promise<boolean> => {
    const id = ++heartbeat;
    write('heartbeat', { id }, { seq: 'next', ack: 'current', extraBody: false });
    for (;;) {
      let m: DriverMessage__Output;
      try {
        m = await rogue.next();
      } catch {
        collect();
        return false;
      }
      seen(m);
      if (m.body === 'heartbeatAck' && Number(m.heartbeatAck?.id) === id) return true;
    }
  };
  let answered = 0;
  /** Answers what the driver sent so far as an agent would: a result per assignment, acks for the rest. */
  const answer = (ok: boolean, message: string) => {
    for (const m of received.slice(answered)) {
      if (m.body === 'assignAccount' && m.assignAccount !== null && m.assignAccount !== undefined) {
        write('assignmentResult', { account: m.assignAccount.account, generation: m.assignAccount.generation, ok, message }, { seq: 'next', ack: 'current', extraBody: false });
      }
    }
    answered = received.length;
    write('ack', {}, { seq: 'next', ack: 'current', extraBody: false });
  };
  /** The accounts it may cache, by what its hello announced. */
  const own = (hello: Step | undefined): string[] => {
    const statics = hello?.do === 'message' ? ((hello.body.staticAccounts as { name: string }[] | undefined) ?? []) : [];
    return [ROGUE_ACCOUNT, ...statics.map((a) => a.name)];
  };
  /** Until it caches each of `accounts` at the epoch given, and the driver has acknowledged every answer. */
  const settle = async (accounts: readonly string[]): Promise<boolean> => {
    await vi.waitFor(async () => {
      if (status !== undefined || !(await sync())) return;
      answer(true, 'connected');
      const missing = accounts.filter((a) => given.get(a)?.caching !== true);
      if (missing.length > 0 || peerAck < sent) throw new Error(`not yet caching ${missing.join(', ')} (answers up to ${sent}, acknowledged up to ${peerAck})`);
    }, WAIT);
    return status === undefined;
  };
  const pickAccount = (pick: AccountPick): string => {
    if (pick.of === 'named') return pick.name;
    const caching = [...given].filter(([, g]) => g.caching).map(([a]) => a);
    const held = [...given.keys()].filter((a) => !caching.includes(a));
    const from = pick.of === 'other' ? [...otherEpochs.keys()] : pick.of === 'held' && held.length > 0 ? held : caching.length > 0 ? caching : [ROGUE_ACCOUNT];
    return from[pick.index % from.length] as string;
  };
  const pickEpoch = (account: string, pick: EpochPick): number => {
    if (typeof pick === 'number') return pick;
    const epoch = given.get(account)?.epoch ?? otherEpochs.get(account) ?? 0;
    return pick === 'given' ? epoch : pick === 'before' ? Math.max(0, epoch - 1) : epoch + 1;
  };
  let settled = false;
  const queries = new Set<number>();
  /** A sync, and until the driver has answered every resume query sent (after a read of the table), as an agent waits for them. */
  const syncAnswered = async () => {
    await vi.waitFor(async () => {
      if (status !== undefined || !(await sync())) return;
      const answers = new Set(received.flatMap((m) => (m.body === 'resumeInfo' ? [Number(m.resumeInfo?.queryId)] : [])));
      const waiting = [...queries].filter((q) => !answers.has(q));
      if (waiting.length > 0) throw new Error(`resume queries ${waiting.join(', ')} not answered`);
    }, WAIT);
  };
  try {
    if (runSteps.hello !== undefined) {
      collect();
      if (runSteps.hello.do === 'message') write(runSteps.hello.kind, runSteps.hello.body, runSteps.hello.envelope);
      if (runSteps.settle) settled = await settle(own(runSteps.hello));
    }
    for (const step of runSteps.steps) {
      collect();
      if (status !== undefined) break;
      switch (step.do) {
        case 'message':
          write(step.kind, step.body, step.envelope);
          break;
        case 'bytes':
          rogue.send(Buffer.from(step.bytes));
          break;
        case 'sync':
          await syncAnswered();
          break;
        case 'answer':
          answer(step.ok, step.message);
          break;
        case 'cache': {
          const account = pickAccount(step.account);
          write(step.kind, { ...step.body, account, cachingEpoch: pickEpoch(account, step.epoch) }, step.envelope);
          if (settled) cacheSent.add(step.kind);
          if (step.kind === 'resumeQuery') queries.add(Number(step.body.queryId ?? 0));
          break;
        }
      }
    }
    await syncAnswered();
    const synced = status === undefined ? await sync() : false;
    collect();
    return { status, received, synced, settled, cacheSent };
  } finally {
    rogue.close();
  }
}

/** The next message with this body, skipping acks and the like. */
async function nextOf(agent: RawAgent, body: string): Promise<DriverMessage__Output> {
  for (;;) {
    const m = await agent.next();
    if (m.body === body) return m;
  }
}

/** The table as far as the rogue may not change it. */
function guarded(snapshot: TableSnapshot): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, json] of snapshot.items) {
    const [pk = '', sk = ''] = key.split('|');
    const item = JSON.parse(json) as Record<string, unknown>;
    if (pk === 'SESSION') {
      if (item.agentId !== 'good-agent') continue;
      // The good agent's own renewals (and when the last one was, for the agents API).
      delete item.leaseExpiresAt;
      delete item.renewedAt;
      delete item.lastProcessedSeq;
      delete item[TTL_ATTRIBUTE];
    } else if (isAccountPartition(pk) || pk === 'ACCESS' || pk === 'CLEANUP') {
      // The rogue's own static accounts come and go (and a gone one is marked for its cache's cleanup).
      if (sk !== '#BUILT' && !others.has(sk)) continue;
    } else if (isChangePartition(pk)) {
      // `<13-digit ms>#<name>#<10-digit generation>`
      if (!others.has(sk.slice(14, -11))) continue;
    } else if (pk === 'AGENTID') {
      if (sk !== 'good-agent' && sk !== 'parked-agent') continue; // the rogue's own ids are bound to its identity
    } else if (pk.startsWith('SOURCE#agent:')) {
      if (pk !== 'SOURCE#agent:good-agent') continue;
    } else if (pk === 'SOURCELOCK') {
      if (sk !== 'agent:good-agent') continue; // the rogue's own announcements take their own source's lock
    } else if (pk === 'RANK') {
      continue; // counts follow the rogue's static accounts; `total` is checked against the items at the end
    } else if (pk.startsWith('HELD#')) {
      if (pk !== 'HELD#good-agent') continue; // what each agent holds, as its account items say
    } else if (cacheAccount(pk) !== undefined) {
      // The cached data of an account is written by its elected caching agent, which the rogue may be
      // for its own accounts (its static ones, and those of its zone); the others' are guarded.
      if (!others.has(cacheAccount(pk)?.account ?? '')) continue;
    }
    out.set(key, item);
  }
  return out;
}

function guardedDiff(before: Map<string, unknown>, after: Map<string, unknown>): string[] {
  const lines: string[] = [];
  for (const [key, value] of after) {
    const old = before.get(key);
    if (old === undefined) lines.push(`added ${key}: ${JSON.stringify(value).slice(0, 400)}`);
    else if (JSON.stringify(old) !== JSON.stringify(value)) lines.push(`changed ${key}: ${JSON.stringify(old).slice(0, 400)} -> ${JSON.stringify(value).slice(0, 400)}`);
  }
  for (const key of before.keys()) if (!after.has(key)) lines.push(`removed ${key}`);
  return lines;
}

/** The account a cache partition (`RESOURCE#<account>`, `CACHE#...`, `PODMETRICS#...`) belongs to, if `pk` is one. */
function cacheAccount(pk: string): { kind: CacheBodyKind; account: string } | undefined {
  const m = /^(RESOURCE|CACHE|PODMETRICS)#(.*)$/s.exec(pk);
  if (m === null) return undefined;
  return { kind: m[1] === 'PODMETRICS' ? 'podMetrics' : 'resourceEvents', account: m[2] as string };
}

/**
 * What the rogue's cache messages wrote for its own accounts from one snapshot to the next: cache
 * items added or changed, and the cluster status of an account item (only `resourceEvents` write
 * it), each with the driver's time of taking what it holds (`at`). Removals are left out: the cleanup
 * of a static account that went removes its cache.
 */
function ownCacheWrites(before: TableSnapshot, after: TableSnapshot): { kind: CacheBodyKind; at: number }[] {
  const out: { kind: CacheBodyKind; at: number }[] = [];
  const at = (value: unknown) => (value as { at?: unknown } | undefined)?.at;
  for (const [key, json] of after.items) {
    const old = before.items.get(key);
    if (old === json) continue;
    const bar = key.indexOf('|');
    const pk = key.slice(0, bar);
    const item = JSON.parse(json) as { at?: unknown; cluster?: unknown };
    const cache = cacheAccount(pk);
    if (cache !== undefined && !others.has(cache.account) && typeof item.at === 'number') out.push({ kind: cache.kind, at: item.at });
    if (isAccountPartition(pk) && !others.has(key.slice(bar + 1)) && typeof at(item.cluster) === 'number') {
      const was = old === undefined ? undefined : (JSON.parse(old) as { cluster?: unknown }).cluster;
      if (JSON.stringify(was) !== JSON.stringify(item.cluster)) out.push({ kind: 'resourceEvents', at: at(item.cluster) as number });
    }
  }
  return out;
}

/**
 * The error the driver logs, as documented (docs/protocol.md#resource-keys), when the table refuses a
 * cache write for good (a health report larger than an item even compressed): dropped, and
 * counted in `vendor_driver_resource_writes_dropped_total`. The rogue may cause it for its own
 * accounts only.
 */
function droppedForGood(line: Record<string, unknown>): boolean {
  return line.component === 'cache' && typeof line.msg === 'string' && /^the table refuses .* for good; dropped: /s.test(line.msg) && typeof line.account === 'string' && !others.has(line.account);
}

/** Statuses the driver may end a rogue stream with. */
const CHOSEN = new Set<number>([
  grpcStatus.INVALID_ARGUMENT,
  grpcStatus.PERMISSION_DENIED,
  grpcStatus.NOT_FOUND,
  grpcStatus.RESOURCE_EXHAUSTED,
  grpcStatus.FAILED_PRECONDITION,
  grpcStatus.UNAUTHENTICATED,
  grpcStatus.DEADLINE_EXCEEDED,
]);

describe('a rogue agent with a valid credential of its own identity', () => {
  it('is refused or ignored, writes nothing it is not entitled to, and leaves the good agent alone', { timeout: 600_000 }, async () => {
    console.info(`rogue agent seed: ${SEED}, ${RUNS} runs (replay: ROGUE_SEED=${SEED} ROGUE_RUNS=${RUNS})`);
    await world.fresh([{ name: 'good-1' }, { name: 'parked' }, { name: ROGUE_ACCOUNT }, ...LIVE_ACCOUNTS.map((name) => ({ name }))]);
    // The parked agent uses the fleet token (`AGENT_TOKEN`: any id, zone and static account).
    const driver = await world.driver({ grpc: { maxMessageBytes: MAX_MESSAGE_BYTES }, authenticate: identityTokens({ [ROGUE_TOKEN]: ROGUE, [GOOD_TOKEN]: GOOD }) });
    // The good agent holds its accounts and runs operations but keeps no resource cache: its own cache
    // writes would come at any time, and the table is compared before and after each rogue run. It stays
    // the caching agent of its accounts, so cache data the rogue sends for them is still refused.
    const good = await world.agent('good-agent', { target: `127.0.0.1:${driver.port}`, deployment: 'good', namespace: 'zone', token: GOOD_TOKEN, workers: [operationsWorkerFactory] });
    await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
    await world.activate('good-1', GOOD_ZONE);
    await vi.waitFor(async () => expect((await world.account('good-1')).agents).toEqual([{ agentId: 'good-agent', caching: true }]), WAIT);
    const deployed = await run(world.app, 'good-1', { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before', namespace: 'default' }, data: { v: '1' } }] });
    expect(deployed).toMatchObject({ state: 'SUCCEEDED', agentId: 'good-agent' });

    // `parked`: its agent took two operations and went; they wait, RUNNING, for an agent of its zone.
    const parked = RawAgent.messages({ port: driver.port, token: AGENT_TOKEN });
    parked.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'parked-agent', zone: PARKED_ZONE, agentVersion: '0' } });
    expect((await parked.next()).body).toBe('welcome');
    await world.activate('parked', PARKED_ZONE);
    const assign = await nextOf(parked, 'assignAccount');
    expect(assign.assignAccount?.account).toBe('parked');
    parked.send({ seq: 1, ackSeq: assign.seq, assignmentResult: { account: 'parked', generation: assign.assignAccount?.generation, ok: true, message: 'connected' } });
    await vi.waitFor(async () => expect((await world.account('parked')).agents).toHaveLength(1), WAIT);
    const parkedOps: string[] = [];
    for (const name of ['p1', 'p2']) {
      const reply = await submitOperation(world.app, 'parked', { action: 'scale', targets: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name }], replicas: 2 });
      expect(reply.status).toBe(202);
      parkedOps.push(reply.json.id as string);
      const op = await nextOf(parked, 'operation');
      parked.send({ ackSeq: op.seq, ack: {} });
    }
    parked.close();
    // `rogue-1` is of the rogue's zone: activated while a first agent of that zone was there.
    const first = RawAgent.messages({ port: driver.port, token: ROGUE_TOKEN });
    first.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'rogue-first', zone: ROGUE_ZONE, agentVersion: '0' } });
    expect((await first.next()).body).toBe('welcome');
    await world.activate(ROGUE_ACCOUNT, ROGUE_ZONE);
    expect((await nextOf(first, 'assignAccount')).assignAccount?.account).toBe(ROGUE_ACCOUNT);
    first.close();
    await vi.waitFor(async () => {
      expect((await world.record('parked'))?.state).toBe('FAILED');
      expect(Object.keys((await world.record('parked'))?.agents ?? {})).toEqual([]);
      expect(Object.keys((await world.record(ROGUE_ACCOUNT))?.agents ?? {})).toEqual([]);
      const sessions = (await tableSnapshot(world.table)).items;
      expect([...sessions.keys()].filter((k) => k.startsWith('SESSION|'))).toEqual([`SESSION|${GOOD_ZONE}#good-agent`]);
      expect([...sessions.keys()].filter((k) => k.startsWith('AGENTID|'))).toEqual(['AGENTID|good-agent']);
    }, WAIT);

    const goodSession = driver.sessions().find((s) => s.agentId === 'good-agent');
    if (goodSession === undefined) throw new Error('the good agent has no session');
    const operationIds = [deployed.id, ...parkedOps, `${Date.now()}-0123456789abcdef`];
    // The caching epochs of accounts that are not the rogue's: its cache messages for them carry the
    // right epoch, and are refused for who sends them.
    const otherEpochs = new Map<string, number>();
    for (const name of ['good-1', 'parked']) otherEpochs.set(name, (await world.record(name))?.cachingEpoch ?? 0);
    let last = await tableSnapshot(world.table);
    let baseline = guarded(last);
    let live = 0;
    const eventsReceived = async () => (await driver.metrics.resourceEventsReceived.get()).values.reduce((n, v) => n + v.value, 0);
    const tally = (key: string) => STATS.set(key, (STATS.get(key) ?? 0) + 1);
    /**
     * Per run, when it started and which of its cache messages got past the epoch rule, by the driver's
     * own signs: the count of changes it took, a resume query accepted, and what it wrote of the rogue's
     * own accounts. A write is the run's that was going on when the driver took it (`at`): the writer
     * may put it in the table after the run's end, and the next snapshot finds it.
     */
    const runs: { started: number; admitted: Set<CacheBodyKind> }[] = [];
    const credit = (snapshot: TableSnapshot) => {
      for (const w of ownCacheWrites(last, snapshot)) runs.findLast((run) => run.started <= w.at)?.admitted.add(w.kind);
      last = snapshot;
    };

    /** The good agent is given a new account and confirms it; then the baseline moves on. */
    const goodAgentServed = async (agent: TestAgent) => {
      const name = LIVE_ACCOUNTS[live++] as string;
      await world.activate(name, GOOD_ZONE);
      await vi.waitFor(async () => expect((await world.account(name))).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: 'good-agent', caching: true }] }), WAIT);
      // The driver records the holding in the held index after the account item.
      await vi.waitFor(async () => expect(await readHeldAccounts(world.table, 'good-agent')).toContainEqual({ name, caching: true }), WAIT);
      expect(agent.holder().view(name)).toBeDefined();
      baseline = guarded(await tableSnapshot(world.table));
    };

    let count = 0;
    await fc.assert(
      fc.asyncProperty(arbitraries({ operationIds, goodSessionId: goodSession.id }), async (r) => {
        const logsBefore = world.driverLogs.lines.length;
        const eventsBefore = await eventsReceived();
        const run = { started: Date.now(), admitted: new Set<CacheBodyKind>() };
        runs.push(run);
        const outcome = await play(driver.port, r, otherEpochs);
        tally(outcome.status === undefined ? 'open' : `${outcome.status.code} ${outcome.status.details.slice(0, 60)}`);
        if (outcome.status !== undefined && outcome.status.code !== grpcStatus.CANCELLED) {
          const logged = world.driverLogs.lines.slice(logsBefore).filter((l) => Number(l.level) >= 50);
          expect(CHOSEN, `status ${outcome.status.code} ${outcome.status.details}; driver errors: ${JSON.stringify(logged).slice(0, 3000)}`).toContain(outcome.status.code);
        } else {
          expect(outcome.synced, 'an open stream answers a heartbeat').toBe(true);
        }
        const sentToRogue = outcome.received.filter((m) => m.body === 'operation' || (m.body === 'assignAccount' && others.has(m.assignAccount?.account ?? '')));
        expect(sentToRogue, 'sent to the rogue').toEqual([]);
        const resumed = outcome.received.flatMap((m) => (m.body === 'resumeInfo' && m.resumeInfo?.accepted === true ? [m.resumeInfo.account] : []));
        expect(resumed.filter((a) => others.has(a)), 'resume queries accepted for accounts not the rogue\'s').toEqual([]);
        // Wait until the driver is done with the rogue's stream, then compare.
        await vi.waitFor(() => expect(driver.sessions().filter((s) => s.agentId !== 'good-agent')).toEqual([]), WAIT);
        const now = await tableSnapshot(world.table);
        expect(guardedDiff(baseline, guarded(now))).toEqual([]);
        credit(now);
        // What the rogue wrote of its own accounts is served: the account list, and each of its accounts
        // with its cached resources, cache health and pod metrics (a static account that went: 404).
        expect((await world.call('GET', '/vendor/accounts')).status, 'the account list').toBe(200);
        for (const account of [ROGUE_ACCOUNT, 'rogue-static-1', 'rogue-static-2', 'rs-1']) {
          for (const path of ['', '/resources', '/cache', '/metrics']) {
            const served = await world.call('GET', `/vendor/accounts/${account}${path}`);
            expect(account === ROGUE_ACCOUNT ? [200] : [200, 404], `GET ${account}${path}: ${JSON.stringify(served.json).slice(0, 300)}`).toContain(served.status);
          }
        }
        if ((await eventsReceived()) > eventsBefore) run.admitted.add('resourceEvents');
        if (resumed.length > 0) run.admitted.add('resumeQuery');
        if (r.settle) tally(outcome.settled ? 'caching run: settled' : 'caching run: ended before it settled');
        for (const kind of outcome.cacheSent) tally(`caching run: sent ${kind}`);
        expect(driver.sessions().find((s) => s.agentId === 'good-agent')?.id).toBe(goodSession.id);
        expect(world.driverLogs.lines.slice(logsBefore).filter((l) => Number(l.level) >= 50 && !droppedForGood(l))).toEqual([]);
        if (++count % 25 === 0 && live < 3) await goodAgentServed(good);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );

    // The writes of the last runs that came after their snapshots.
    credit(await tableSnapshot(world.table));
    const admittedRuns = runs.filter((run) => run.admitted.size > 0).length;
    for (const run of runs) for (const kind of run.admitted) tally(`admitted: ${kind}`);
    // How the runs ended (ROGUE_STATS=1): a run that dies at its first message tests little.
    if (process.env.ROGUE_STATS !== undefined) console.info([...STATS].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n}\t${k}`).join('\n'));
    // Each write the table refused for good was counted as well as logged.
    const dropped = (await driver.metrics.resourceWritesDropped.get()).values.reduce((n, v) => n + v.value, 0);
    console.info(`cache messages admitted in ${admittedRuns} of ${RUNS} runs; ${dropped} cache writes the table refused for good`);
    expect(world.driverLogs.lines.filter(droppedForGood)).toHaveLength(dropped);
    // The cache path is reached for real: the caching runs make this certain in practice.
    if (RUNS >= 20) expect(admittedRuns, 'runs in which a cache message of the rogue got past the epoch rule').toBeGreaterThan(0);
    // Everything after the runs: the good agent works as before, the parked operations wait untouched.
    await goodAgentServed(good);
    const after = await run(world.app, 'good-1', { action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after', namespace: 'default' }, data: { v: '1' } }] });
    expect(after).toMatchObject({ state: 'SUCCEEDED', agentId: 'good-agent', attempts: 1 });
    for (const id of parkedOps) expect((await finished(world.app, id, 0).catch((e: Error) => e.message))).toMatch(/still RUNNING/);
    // The sweep of the last rogue sessions may still be at work: a chunk's count in the rank directory
    // follows the chunk's own write by one write (shared/table/accounts/rank.ts), so `total` must come to the
    // number of account items, not equal it at every instant.
    await vi.waitFor(async () => {
      const items = (await tableSnapshot(world.table)).items;
      const accounts = [...items.keys()].filter((k) => isAccountPartition(k.split('|')[0]));
      // On a mismatch, the names the rank index holds and the account items, side by side.
      const ranked = [...items].filter(([k]) => k.startsWith('RANK')).map(([k, json]) => `${k} ${json.slice(0, 600)}`);
      expect((await world.call('GET', '/vendor/accounts?limit=1')).json.total, `accounts ${JSON.stringify(accounts)}; rank ${JSON.stringify(ranked)}`).toBe(accounts.length);
    }, WAIT);
  });
});
