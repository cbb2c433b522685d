/**
 * The wake port under hostile input (docs/security.md#4a-api--driver-replicas-wakes-and-result-asks),
 * property-based, against a real replica (driver/wake/replica.ts) with a real agent holding the
 * account, on dynalite. Anyone on the network can reach the port, so each run throws at it a batch
 * of datagrams (random bytes; valid wakes, wakes naming an operation or an account and reservation verdicts truncated, bit-flipped,
 * extended or with a field replaced; oversized; other versions; the real secret's signature over a
 * text of the wrong shape; replays of captured ones) and of HTTP requests to `/v1/finished` and
 * `/v1/reserve` (asks spoilt the same ways, random and mutated headers and bodies, other methods,
 * paths and content types, bodies past the limit, slow and truncated bodies, the real secret's
 * signature over a body the schema refuses, JSON with prototype keys), while one reservation is held
 * for the run. After every run: every datagram was counted as refused, every HTTP answer was a
 * refusal status (no 5xx, no 2xx) within the endpoint's bounds, nothing was reserved but the run's own
 * reservation and nothing was sent to the agent. At the end: the operation items of the table are as
 * they were, the log holds neither the secret nor any body text, and the replica still answers a good
 * ask, a good reservation and a good wake.
 *
 * The seed is printed in any failure; replay it with
 * `WAKE_FUZZ_SEED=<seed> WAKE_FUZZ_RUNS=<runs> npx vitest run test/security/wake-port.test.ts`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Driver } from '../../driver/server.ts';
import { liveSessions } from '../../shared/table/agents/sessions.ts';
import { PK_PREFIX } from '../../shared/table/core/keys.ts';
import { compress, createOperation } from '../../shared/table/operations/operations.ts';
import { parseWakeAddress } from '../../shared/wake/address.ts';
import { encodeWake } from '../../shared/wake/message.ts';
import { encodeReservationVerdict } from '../../shared/wake/reservation-verdict.ts';
import { encodeReserveAsk, RESERVE_ASK_HEADER, RESERVE_ASK_PATH, MAX_RESERVE_BODY_BYTES, type ReservedOperation } from '../../shared/wake/reserve-ask.ts';
import { encodeResultAsk, RESULT_ASK_HEADER, RESULT_ASK_PATH } from '../../shared/wake/result-ask.ts';
import { HEADERS_TIMEOUT_MS } from '../../driver/wake/result-endpoint.ts';
import { useAccountsWorld } from '../support/accounts-world.ts';
import { hostileString, hostileValue, PROTOTYPE_KEYS } from '../support/hostile.ts';
import { secretScanner } from '../support/secret-scanner.ts';
import { tableSnapshot, type TableSnapshot } from '../support/snapshot.ts';
import { startWakeReplica } from '../support/wake-replica.ts';
import { reservedOperation } from '../support/reserved-operation.ts';

const RUNS = Number(process.env.WAKE_FUZZ_RUNS ?? 60);
const SEED = process.env.WAKE_FUZZ_SEED === undefined ? (Date.now() ^ (Math.random() * 0x7fffffff)) | 0 : Number(process.env.WAKE_FUZZ_SEED);

const world = useAccountsWorld();
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const SECRET = 'wake-port-fuzz-secret-0123456789abcdef012';
const ROGUE = 'a-secret-the-replica-does-not-know-0123456';
/** In every body and header the run sends: it must never reach the log. */
const CANARY = `canary${randomBytes(6).toString('hex')}`;
const WAIT = { timeout: 20_000, interval: 10 };
/**
 * The longest a hostile request may go unanswered: the endpoints' own bounds for a request whose
 * headers came (at once, or a reservation's body within RESERVE_BODY_WAIT_MS), with room for a loaded
 * machine, and well short of the server's request timeout (`wake.resultHoldMs`, 20 s, plus 5 s).
 */
const ANSWER_WITHIN_MS = 8_000;
const RARELY = 60_000;

// ---- the replica ----

interface PortWorld {
  driver: Driver;
  address: { host: string; port: number };
  /** A queued operation of the account, stored without a wake: only a named wake would make the replica claim it. */
  queued: string;
  count(metric: 'wakes' | 'reservations' | 'resultAsks' | 'namedWakes', outcome?: string): Promise<number>;
  handedOut(): Promise<number>;
}

async function start(): Promise<PortWorld> {
  await world.fresh([{ name: 'prod' }]);
  const driver = await startWakeReplica(world, {
    table: world.table,
    secret: SECRET,
    assignmentPollMs: 200,
    operationsPollMs: RARELY,
    // Rates high enough that every message is checked, not dropped unchecked.
    wake: { maxPerSecond: 100_000, maxResultAsksPerSecond: 100_000 },
  });
  cleanups.push(() => driver.close(100));
  await world.agent('a1', { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(async () => expect(await liveSessions(world.table, Date.now())).toHaveLength(1), WAIT);
  const [session] = await liveSessions(world.table, Date.now());
  const address = parseWakeAddress(session?.wake ?? '') ?? { host: '', port: 0 };
  await world.activate('prod');
  await vi.waitFor(async () => expect((await world.record('prod'))?.agents['a1']?.ok).toBe(true), WAIT);
  const { id, operation } = described('queued');
  await createOperation(world.table, { ...operation, request: Buffer.from(operation.request, 'base64') });
  const count = async (metric: 'wakes' | 'reservations' | 'resultAsks' | 'namedWakes', outcome?: string) =>
    (await driver.metrics[metric].get()).values.filter((x) => outcome === undefined || x.labels.outcome === outcome).reduce((sum, x) => sum + x.value, 0);
  return { driver, address, queued: id, count, handedOut: async () => (await driver.metrics.operationsHandedOut.get()).values[0]?.value ?? 0 };
}

/** An operation of account prod as the API describes it in a reservation ask, with the canary in its request. */
const described = (name: string) => reservedOperation(name, { data: { canary: CANARY } });

/** The operation items, their requests and their queue and account entries: what a wrongly accepted message would change. */
async function operationItems(): Promise<TableSnapshot['items']> {
  const all = (await tableSnapshot(world.table)).items;
  const prefixes = [PK_PREFIX.operation, PK_PREFIX.operationRequest, PK_PREFIX.operationQueue, PK_PREFIX.operationByAccount];
  return new Map([...all].filter(([key]) => prefixes.some((p) => key.startsWith(p))));
}

// ---- sending ----

async function sendDatagrams(address: { host: string; port: number }, datagrams: readonly Uint8Array[]): Promise<void> {
  const socket = createSocket('udp4');
  try {
    // One at a time: each is in the replica's socket before the next, so none is lost to a full buffer.
    for (const d of datagrams) await new Promise<void>((resolve, reject) => socket.send(d, address.port, address.host, (err) => (err ? reject(err) : resolve())));
  } finally {
    socket.close();
  }
}

/** What came back for a raw HTTP exchange: the status of the first answer, or that the server closed without one. */
interface Answer {
  status: number | undefined;
  /** With `waitForClose`: whether the server closed the connection after its answer. */
  closed?: boolean;
  /** Milliseconds from the first byte sent to the status line (or the close). */
  ms: number;
  hung: boolean;
}

/** A request as bytes on a fresh connection: parts written with pauses, then the write side ended, or left open. */
interface RawRequest {
  parts: { bytes: Uint8Array; pauseMs: number }[];
  /** `end`: the client closes its side after the last part (a truncated request); `open`: it waits with its side open. */
  then: 'end' | 'open';
}

function exchange(address: { host: string; port: number }, raw: RawRequest, waitForClose = false, withinMs = ANSWER_WITHIN_MS): Promise<Answer> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(address.port, address.host);
    let received = '';
    let done = false;
    let answered: Answer | undefined;
    const finish = (status: number | undefined, hung = false) => {
      if (done) return;
      if (waitForClose && answered === undefined && status !== undefined && !hung) {
        answered = { status, ms: Date.now() - started, hung };
        return;
      }
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answered === undefined ? { status, ms: Date.now() - started, hung } : { ...answered, closed: !hung });
    };
    const timer = setTimeout(() => finish(undefined, true), withinMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (answered !== undefined) return;
      received += chunk;
      // An interim answer (100 Continue to an `Expect`) is not the answer.
      received = received.replace(/^HTTP\/1\.1 1\d\d [^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n/, '');
      const line = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(received);
      if (line !== null && !line[1]?.startsWith('1')) finish(Number(line[1]));
      else if (received.length > 200 || (received.includes('\r\n') && !received.startsWith('HTTP/'))) finish(-1);
    });
    // A server that closes or resets while the client still writes: that is the answer.
    socket.on('error', () => finish(undefined));
    socket.on('close', () => finish(undefined));
    socket.once('connect', async () => {
      for (const part of raw.parts) {
        if (done) return;
        if (part.pauseMs > 0) await new Promise((r) => setTimeout(r, part.pauseMs));
        if (!done && socket.writable) socket.write(part.bytes);
      }
      if (raw.then === 'end' && !done && socket.writable) socket.end();
    });
  });
}

// ---- hostile datagrams ----

const hmacHex = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Tokens that are no valid id, nonce, time, topic, verdict or signature; a few (`1.5`, `-1`) are account names, which the one template that puts them there mends. */
const HOSTILE_TOKENS = [
  '',
  ' ',
  '\u0000',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '+1',
  '9'.repeat(16),
  '9'.repeat(400),
  'NaN',
  'Infinity',
  '١٢٣',
  'ＡＢ',
  '🧨',
  '\ud800',
  'e\u0301',
  '\r\n',
  'AB'.repeat(16),
  'g'.repeat(32),
  'ab'.repeat(15),
  'ab'.repeat(17),
  'prød',
  'has space',
  'a'.repeat(254),
  '{"__proto__":1}',
  'constructor()',
  `${CANARY}!`,
];

/** A text message's fields spoilt one way: the bytes a sender could put in a datagram or an ask line. */
type TextSpoil =
  | { kind: 'flip'; at: number[]; bit: number }
  | { kind: 'truncate'; keep: number }
  | { kind: 'extend'; tail: Uint8Array }
  | { kind: 'field'; index: number; token: string }
  | { kind: 'drop-field'; index: number }
  | { kind: 'extra-field'; index: number; token: string }
  | { kind: 'version'; to: string }
  | { kind: 'spaces'; to: string }
  | { kind: 'case' };

const spoil: fc.Arbitrary<TextSpoil> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat() }),
  fc.record({ kind: fc.constant('extend' as const), tail: fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.constantFrom(Uint8Array.of(0), Buffer.from(' '), Buffer.from('\n'), Buffer.from(' 00'))) }),
  fc.record({ kind: fc.constant('field' as const), index: fc.nat(), token: fc.constantFrom(...HOSTILE_TOKENS) }),
  fc.record({ kind: fc.constant('drop-field' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('extra-field' as const), index: fc.nat(), token: fc.oneof(fc.constantFrom(...HOSTILE_TOKENS), fc.constant(hex(16)), fc.constant(hex(32))) }),
  fc.record({ kind: fc.constant('version' as const), to: fc.constantFrom('vw0', 'vw2', 'VW1', 'vw1x', 'vr1', 'vrs1', 'vrv1', 'vrv2', 'vra1', 'vrsa1', 'v', '') }),
  fc.record({ kind: fc.constant('spaces' as const), to: fc.constantFrom('  ', '\t', '\u00a0', '\u0000', ' \u0000', '') }),
  fc.record({ kind: fc.constant('case' as const) }),
);

/** `text` spoilt; the result always differs from it (a spoil that would change nothing flips a bit instead). */
function spoilt(text: string, s: TextSpoil): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  const fields = text.split(' ');
  const out = ((): Buffer => {
    switch (s.kind) {
      case 'flip': {
        const copy = Buffer.from(bytes);
        for (const at of new Set(s.at.map((a) => a % copy.length))) copy[at] = (copy[at] as number) ^ (1 << s.bit);
        return copy;
      }
      case 'truncate':
        return bytes.subarray(0, s.keep % bytes.length);
      case 'extend':
        return Buffer.concat([bytes, s.tail]);
      case 'field': {
        const copy = [...fields];
        copy[s.index % copy.length] = s.token;
        return Buffer.from(copy.join(' '), 'utf8');
      }
      case 'drop-field':
        return Buffer.from(fields.filter((_, i) => i !== s.index % fields.length).join(' '), 'latin1');
      case 'extra-field': {
        const copy = [...fields];
        copy.splice(s.index % (copy.length + 1), 0, s.token);
        return Buffer.from(copy.join(' '), 'utf8');
      }
      case 'version':
        return Buffer.from([s.to, ...fields.slice(1)].join(' '), 'latin1');
      case 'spaces':
        return Buffer.from(fields.join(s.to), 'utf8');
      case 'case':
        return Buffer.from(text.toUpperCase(), 'latin1');
    }
  })();
  if (!out.equals(bytes)) return out;
  const copy = Buffer.from(bytes);
  copy[copy.length - 1] = (copy[copy.length - 1] as number) ^ 1;
  return copy;
}

/**
 * `line` spoilt for a header: HTTP drops the white space around a header's value, so a spoil that only
 * adds some there changes nothing the replica sees; it flips a bit instead.
 */
function spoiltLine(line: string, s: TextSpoil): string {
  const out = spoilt(line, s).toString('latin1');
  return out.trim() === line ? spoilt(line, { kind: 'flip', at: [0], bit: 1 }).toString('latin1') : out;
}

/** A text signed as the API signs it, under the real secret or another: right signature, wrong shape when the text is. */
const signed = (text: string, secret = SECRET) => `${text} ${hmacHex(secret, text)}`;

/** What a run holds that its messages may aim at: the queued operation, the reservation held, an accepted wake captured. */
interface Targets {
  queued: string;
  reserved: { id: string; askNonce: string };
  captured: Buffer[];
}

type DatagramRecipe = (t: Targets) => Buffer;

const now = () => Date.now();
const validWakes: ((t: Targets) => string)[] = [
  () => encodeWake(SECRET, 'accounts', now()).toString('latin1'),
  () => encodeWake(SECRET, 'operations', now()).toString('latin1'),
  () => encodeWake(SECRET, 'accounts', now(), undefined, { account: 'prod' }).toString('latin1'),
  (t) => encodeWake(SECRET, 'operations', now(), undefined, { id: t.queued, account: 'prod' }).toString('latin1'),
  (t) => encodeWake(SECRET, 'operations', now(), undefined, { id: t.queued, account: 'prod', requestHash: hex(32) }).toString('latin1'),
  (t) => encodeReservationVerdict(SECRET, 'stored', t.reserved.id, t.reserved.askNonce, now()).toString('latin1'),
  (t) => encodeReservationVerdict(SECRET, 'release', t.reserved.id, t.reserved.askNonce, now()).toString('latin1'),
];

/** Texts of the wrong shape, each field at its place: signed with the real secret they must still be refused. */
const wrongShapes: ((t: Targets, token: string) => string)[] = [
  (_, token) => `vw1 ${token} ${now()} ${hex(16)}`,
  (_, token) => `vw1 accounts ${token} ${hex(16)}`,
  (_, token) => `vw1 operations ${now()} ${token}`,
  // A name of that shape is an account name (`1.5`, `-1`): another character makes the token none.
  (t, token) => `vw1 operations ${now()} ${hex(16)} ${t.queued} ${/^[A-Za-z0-9._-]{1,253}$/.test(token) ? `${token}!` : token}`,
  (t) => `vw1 accounts ${now()} ${hex(16)} ${t.queued} prod`,
  (_, token) => `vw1 operations ${now()} ${hex(16)} ${token} prod`,
  (t, token) => `vrv1 ${token} ${t.reserved.id} ${t.reserved.askNonce} ${now()} ${hex(16)}`,
  (t, token) => `vrv1 stored ${t.reserved.id} ${token} ${now()} ${hex(16)}`,
  (t, token) => `vrv1 stored ${t.reserved.id} ${t.reserved.askNonce} ${token} ${hex(16)}`,
  (t) => `vrv1 stored ${t.reserved.id} ${t.reserved.askNonce} ${now()} ${hex(16)} extra`,
  (t) => `vw1 operations ${now()} ${hex(16)} ${t.queued} ${'a'.repeat(253)} ${hex(32)} ${'b'.repeat(40)}`,
];

const datagram: fc.Arbitrary<DatagramRecipe> = fc.oneof(
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 600 }).map((b) => () => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_TOKENS).map((s) => () => Buffer.from(s, 'utf8')) },
  { weight: 1, arbitrary: fc.integer({ min: 513, max: 9_000 }).map((n) => (t: Targets) => Buffer.from(validWakes[n % validWakes.length]?.(t).padEnd(n, ' ') ?? '', 'latin1')) },
  { weight: 1, arbitrary: fc.integer({ min: 9_000, max: 60_000 }).map((n) => () => Buffer.alloc(n, 0x41)) },
  { weight: 8, arbitrary: fc.tuple(fc.nat(validWakes.length - 1), spoil).map(([i, s]) => (t: Targets) => spoilt((validWakes[i] as (t: Targets) => string)(t), s)) },
  // Made with another secret, or stale (a minute either way), or signed over the wrong shape with the real one.
  { weight: 2, arbitrary: fc.nat(validWakes.length - 1).map((i) => (t: Targets) => Buffer.from(signed((validWakes[i] as (t: Targets) => string)(t).slice(0, -65), ROGUE), 'latin1')) },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.constantFrom(-1, 1), fc.boolean()).map(([sign, verdict]) => (t: Targets) => {
      const at = now() + sign * 60_000;
      return verdict ? encodeReservationVerdict(SECRET, 'stored', t.reserved.id, t.reserved.askNonce, at) : encodeWake(SECRET, 'operations', at, undefined, { id: t.queued, account: 'prod' });
    }),
  },
  { weight: 3, arbitrary: fc.tuple(fc.nat(wrongShapes.length - 1), fc.constantFrom(...HOSTILE_TOKENS)).map(([i, token]) => (t: Targets) => Buffer.from(signed((wrongShapes[i] as (t: Targets, token: string) => string)(t, token)), 'utf8')) },
  { weight: 2, arbitrary: fc.nat().map((i) => (t: Targets) => t.captured[i % t.captured.length] as Buffer) },
  // Signed and fresh, but misdirected: `stored` for the held id under another ask's nonce, or for another id under its nonce.
  {
    weight: 1,
    arbitrary: fc.boolean().map((otherNonce) => (t: Targets) => encodeReservationVerdict(SECRET, 'stored', otherNonce ? t.reserved.id : hex(16), otherNonce ? hex(16) : t.reserved.askNonce, now())),
  },
);

// ---- hostile HTTP requests ----

/** The reservation body spoilt so that the schema refuses it, whatever signs it. */
type BodySpoil = (op: ReservedOperation) => string;

const STRING_FIELDS = ['account', 'submittedBy', 'idempotencyKey', 'requestHash', 'request'] as const;
const FIELDS = [...STRING_FIELDS, 'record', 'now'] as const;
const notInt = fc.oneof(fc.constantFrom(-1, 1.5, -0.5, '1', null, true, [], {}, 1e400, '1e3', CANARY), fc.string({ maxLength: 5 }));
const notString = fc.oneof(fc.constantFrom(null, 1, -1, true, [], {}, [CANARY], { [CANARY]: 1 }), fc.integer());

/** Keys set on a parsed body by name, never through the prototype, so `__proto__` is an own key of the JSON. */
function withKey(value: Record<string, unknown>, key: string, v: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) Object.defineProperty(copy, k, { value: x, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(copy, key, { value: v, enumerable: true, writable: true, configurable: true });
  return copy;
}

const gzipOf = (text: string) => Buffer.from(compress(text)).toString('base64');

const bodySpoil: fc.Arbitrary<BodySpoil> = fc.oneof(
  fc.tuple(fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS), fc.string({ maxLength: 8 }).filter((k) => !(FIELDS as readonly string[]).includes(k))), hostileValue, fc.boolean()).map(
    ([key, value, inRecord]) =>
      (op: ReservedOperation) =>
        JSON.stringify(inRecord ? { ...op, record: withKey(op.record, key === 'action' || key === 'objects' || key === 'timeoutMs' ? `${key}_` : key, value) } : withKey(op, key, value)),
  ),
  fc.constantFrom(...FIELDS).map((field) => (op: ReservedOperation) => JSON.stringify(Object.fromEntries(Object.entries(op).filter(([k]) => k !== field)))),
  fc.tuple(fc.constantFrom(...STRING_FIELDS), notString).map(([field, value]) => (op: ReservedOperation) => JSON.stringify({ ...op, [field]: value })),
  fc.tuple(fc.constantFrom('now', 'objects', 'timeoutMs'), notInt).map(([field, value]) => (op: ReservedOperation) => JSON.stringify(field === 'now' ? { ...op, now: value } : { ...op, record: { ...op.record, [field]: value } })),
  // Whole numbers past what the API ever stores: times past the safe integers, more objects than an operation holds, a longer time-out.
  fc
    .tuple(fc.constantFrom('now', 'objects', 'timeoutMs'), fc.constantFrom(1e300, Number.MAX_SAFE_INTEGER + 2, 2 ** 63, 2 ** 64, 86_400_001, 501))
    .filter(([field, n]) => n > { now: Number.MAX_SAFE_INTEGER, objects: 500, timeoutMs: 86_400_000 }[field])
    .map(([field, n]) => (op: ReservedOperation) => JSON.stringify(field === 'now' ? { ...op, now: n } : { ...op, record: { ...op.record, [field]: n } })),
  fc.constantFrom('apply', 'DEPLOY', '', '__proto__', 'toString').map((action) => (op: ReservedOperation) => JSON.stringify({ ...op, record: { ...op.record, action } })),
  fc.constantFrom('!!!!', `${CANARY}===`, 'AAAA', gzipOf('').slice(0, 8), Buffer.from(CANARY).toString('base64'), Buffer.from(gzipSync(`{"action":"deploy","manifests":[${CANARY}`)).toString('base64'), gzipOf(`"${CANARY}"`).slice(0, -4)).map(
    (request) => (op: ReservedOperation) => JSON.stringify({ ...op, request }),
  ),
  // JSON that gunzips, but is not the request the operation's hash and action name.
  fc
    .constantFrom<unknown>('x', '{"action":', null, [1], { action: 'deploy' }, { action: 'delete', targets: [] }, { action: 'deploy', manifests: [], forceConflicts: false, [CANARY]: 1 })
    .map((request) => (op: ReservedOperation) => JSON.stringify({ ...op, request: Buffer.from(compress(request)).toString('base64') })),
  fc.constant((op: ReservedOperation) => JSON.stringify({ ...op, request: described('another').operation.request })),
  fc.constant((op: ReservedOperation) => JSON.stringify({ ...op, requestHash: hex(32) })),
  fc.constantFrom('delete', 'scale', 'patch').map((action) => (op: ReservedOperation) => JSON.stringify({ ...op, record: { ...op.record, action } })),
  fc.constantFrom(254, 300).map((n) => (op: ReservedOperation) => JSON.stringify({ ...op, account: 'a'.repeat(n) })),
  fc.constant((op: ReservedOperation) => JSON.stringify({ ...op, requestHash: op.requestHash.toUpperCase() })),
  fc.constant((op: ReservedOperation) => JSON.stringify([op])),
  fc.constant((op: ReservedOperation) => `${JSON.stringify(op)}x`),
  fc.constant((op: ReservedOperation) => JSON.stringify(op).slice(0, -1)),
  fc.constant((op: ReservedOperation) => JSON.stringify(op).replace('{', `{"__proto__":{"account":"prod","polluted":"${CANARY}"},`)),
  // A key given twice: JSON.parse keeps the last, which is the wrong one.
  fc.constant((op: ReservedOperation) => JSON.stringify(op).replace('"now":', `"now":"${CANARY}","now":`).replace(/\}$/, ',"now":-1}')),
  fc.constant((op: ReservedOperation) => `\ufeff${JSON.stringify({ ...op, account: 'prod\u0000' })}`),
  fc.constant((op: ReservedOperation) => JSON.stringify({ ...op, submittedBy: `${'\ud800'}${CANARY}` })),
);

interface AskLine {
  path: string;
  header: string;
  line: string;
  body: string;
}

/** A line and body a hostile request carries: each an ask spoilt so no replica should take it. */
type AskRecipe = (t: Targets) => AskLine;

const resultAsk = (t: Targets, wait = 50, at = now(), secret = SECRET) => encodeResultAsk(secret, t.queued, wait, at);
const reserveAsk = (name: string, at = now(), secret = SECRET) => {
  const { id, operation } = described(name);
  const body = JSON.stringify(operation);
  return { id, operation, body, line: encodeReserveAsk(secret, id, 'prod', at, body) };
};

const askRecipe: fc.Arbitrary<AskRecipe> = fc.oneof(
  // Result asks: spoilt, forged, stale, a wake's or a verdict's text in the header, replayed.
  { weight: 3, arbitrary: spoil.map((s) => (t: Targets) => ({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: spoiltLine(resultAsk(t), s), body: '' })) },
  { weight: 1, arbitrary: fc.constantFrom(-60_000, 60_000).map((skew) => (t: Targets) => ({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: resultAsk(t, 50, now() + skew), body: '' })) },
  { weight: 1, arbitrary: fc.constant((t: Targets) => ({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: resultAsk(t, 50, now(), ROGUE), body: '' })) },
  { weight: 1, arbitrary: fc.constant((t: Targets) => ({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: encodeWake(SECRET, 'operations', now()).toString('latin1'), body: '' })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...HOSTILE_TOKENS).map((token) => (t: Targets) => ({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: signed(`vr1 ${t.queued} ${token} ${now()} ${hex(16)}`), body: '' })),
  },
  { weight: 1, arbitrary: fc.constant((t: Targets) => ({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: t.captured[1]?.toString('latin1') ?? '', body: '' })) },
  // Reservation asks: the line spoilt, the body changed under a good line, forged, stale, and the real
  // secret's signature over a body the schema refuses.
  { weight: 3, arbitrary: spoil.map((s) => () => { const a = reserveAsk('spoilt-line'); return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: spoiltLine(a.line, s), body: a.body }; }) },
  { weight: 2, arbitrary: spoil.map((s) => () => { const a = reserveAsk('spoilt-body'); return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: a.line, body: spoilt(a.body, s).toString('utf8') }; }) },
  { weight: 1, arbitrary: fc.constantFrom(-60_000, 60_000).map((skew) => () => { const a = reserveAsk('stale', now() + skew); return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: a.line, body: a.body }; }) },
  { weight: 1, arbitrary: fc.constant(() => { const a = reserveAsk('forged', now(), ROGUE); return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: a.line, body: a.body }; }) },
  {
    weight: 4,
    arbitrary: bodySpoil.map((make) => () => {
      const { id, operation } = described('wrong-shape');
      const body = make(operation);
      return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: encodeReserveAsk(SECRET, id, 'prod', now(), body), body };
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constant(() => {
      // The body of one operation under the line of another, both signed.
      const a = reserveAsk('named');
      const other = described('other').operation;
      const body = JSON.stringify(other);
      return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: encodeReserveAsk(SECRET, a.id, 'prod', now(), body), body };
    }),
  },
  { weight: 1, arbitrary: fc.integer({ min: MAX_RESERVE_BODY_BYTES + 1, max: 200_000 }).map((n) => () => { const a = reserveAsk('oversized'); const body = `${a.body.slice(0, -1)},"pad":"${CANARY.padEnd(n, 'x')}"}`; return { path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: encodeReserveAsk(SECRET, a.id, 'prod', now(), body), body }; }) },
);

/** How the request around the line and body is spoilt: method, path, headers, framing, pace. */
interface Framing {
  method: string;
  path: string | undefined;
  /** The ask header left out, sent twice, or under another name. */
  askHeader: 'as-is' | 'missing' | 'twice' | 'renamed';
  extraHeaders: [string, string][];
  contentType: string | undefined;
  framing: 'length' | 'chunked' | 'short-length' | 'long-length' | 'huge-length' | 'both' | 'bad-chunks' | 'none';
  /** Pieces the request is written in, each after a pause; `then` as in RawRequest. */
  pieces: number;
  pauseMs: number;
  then: 'end' | 'open';
  garbage: Uint8Array | undefined;
}

const framing: fc.Arbitrary<Framing> = fc.record({
  method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('GET', 'POST') }, { weight: 2, arbitrary: fc.constantFrom('PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH', 'TRACE', 'FOO', 'get', 'CONNECT', 'PRI', 'G\u0000T') }),
  path: fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.constantFrom('/', '/v1/finished?x=1', '/v1/reserve/', '//v1/reserve', '/V1/RESERVE', '/v1/finished#', '*', 'http://x/v1/reserve', '/v1/%2e%2e/v1/reserve', '/v1/reserve%00', `/${'a'.repeat(5_000)}`, '/v1/reserve?__proto__[x]=1', '/v1/f\u00ffnished') },
  ),
  askHeader: fc.oneof({ weight: 6, arbitrary: fc.constant('as-is' as const) }, { weight: 1, arbitrary: fc.constantFrom('missing' as const, 'twice' as const, 'renamed' as const) }),
  extraHeaders: fc.array(
    fc.oneof(
      fc.tuple(fc.constantFrom('x-canary', 'cookie', 'authorization', 'host', 'expect', 'upgrade', 'connection', 'transfer-encoding', 'content-encoding', '__proto__', 'constructor'), fc.oneof(hostileString.filter((s) => s.length < 3_000 && !/[\r\n]/.test(s)), fc.constantFrom(CANARY, '100-continue', 'websocket', 'close', 'gzip', 'chunked, identity'))),
      fc.constant(['x-huge', 'h'.repeat(5_000)] as [string, string]),
      fc.constant(['bad header', 'x'] as [string, string]),
      fc.constant(['x-nul', 'a\u0000b'] as [string, string]),
    ),
    { maxLength: 3 },
  ),
  contentType: fc.option(fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', ';;;', '\u00ff'), { nil: undefined }),
  framing: fc.oneof({ weight: 6, arbitrary: fc.constant('length' as const) }, { weight: 1, arbitrary: fc.constantFrom('chunked' as const, 'short-length' as const, 'long-length' as const, 'huge-length' as const, 'both' as const, 'bad-chunks' as const, 'none' as const) }),
  pieces: fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }) }),
  pauseMs: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 60 }) }),
  then: fc.oneof({ weight: 5, arbitrary: fc.constant('open' as const) }, { weight: 1, arbitrary: fc.constant('end' as const) }),
  garbage: fc.option(fc.uint8Array({ minLength: 1, maxLength: 64 }), { nil: undefined, freq: 8 }),
});

/** The bytes of a request: the ask's line and body framed as `f` says. */
function rawRequest(ask: AskLine, f: Framing): RawRequest {
  const body = Buffer.from(ask.body, 'utf8');
  const headers: [string, string][] = [['host', '127.0.0.1']];
  if (f.askHeader === 'as-is' || f.askHeader === 'twice') headers.push([ask.header, ask.line]);
  if (f.askHeader === 'twice') headers.push([ask.header, ask.line]);
  if (f.askHeader === 'renamed') headers.push([`${ask.header}-x`, ask.line]);
  if (f.contentType !== undefined) headers.push(['content-type', f.contentType]);
  headers.push(...f.extraHeaders);
  let payload: Buffer = body;
  switch (f.framing) {
    case 'length':
      headers.push(['content-length', String(body.length)]);
      break;
    case 'short-length':
      headers.push(['content-length', String(Math.max(0, body.length - 7))]);
      break;
    case 'long-length':
      headers.push(['content-length', String(body.length + 50)]);
      break;
    case 'huge-length':
      headers.push(['content-length', body.length % 2 === 0 ? String(MAX_RESERVE_BODY_BYTES * 64) : '9'.repeat(20)]);
      break;
    case 'chunked':
    case 'bad-chunks':
      headers.push(['transfer-encoding', 'chunked']);
      payload =
        f.framing === 'chunked'
          ? Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')])
          : Buffer.concat([Buffer.from(`zz\r\n`), body, Buffer.from('\r\nffffffffffffffff\r\n')]);
      break;
    case 'both':
      headers.push(['content-length', String(body.length)], ['transfer-encoding', 'chunked']);
      break;
    case 'none':
      break;
  }
  const head = Buffer.from(`${f.method} ${f.path ?? ask.path} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`, 'latin1');
  const all = Buffer.concat([head, payload, f.garbage === undefined ? Buffer.alloc(0) : Buffer.from(f.garbage)]);
  const size = Math.ceil(all.length / f.pieces);
  const parts = Array.from({ length: f.pieces }, (_, i) => ({ bytes: all.subarray(i * size, (i + 1) * size), pauseMs: i === 0 ? 0 : f.pauseMs })).filter((p) => p.bytes.length > 0);
  return { parts, then: f.then };
}

/** Statuses a refused request may get: the endpoints' own refusals and Node's for what is not HTTP. */
const REFUSALS = new Set([400, 403, 404, 405, 408, 413, 414, 417, 429, 431, 501, 503, 505]);

type Hostile = { kind: 'datagram'; make: DatagramRecipe } | { kind: 'http'; ask: AskRecipe; framing: Framing };

const hostile: fc.Arbitrary<Hostile> = fc.oneof(
  { weight: 3, arbitrary: datagram.map((make) => ({ kind: 'datagram' as const, make })) },
  { weight: 2, arbitrary: fc.tuple(askRecipe, framing).map(([ask, f]) => ({ kind: 'http' as const, ask, framing: f })) },
);

/** A good reservation ask, as the API makes it: the replica's answer and what the verdict needs. */
async function goodReservation(address: { host: string; port: number }, name: string): Promise<{ status: number | undefined; id: string; askNonce: string }> {
  const a = reserveAsk(name);
  const answer = await exchange(address, rawRequest({ path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: a.line, body: a.body }, plainFraming('POST')));
  return { status: answer.status, id: a.id, askNonce: a.line.split(' ')[4] as string };
}

function plainFraming(method: string): Framing {
  return { method, path: undefined, askHeader: 'as-is', extraHeaders: [], contentType: 'application/json', framing: 'length', pieces: 1, pauseMs: 0, then: 'open', garbage: undefined };
}

async function goodResultAsk(address: { host: string; port: number }, id: string): Promise<number | undefined> {
  const line = encodeResultAsk(SECRET, id, 0, now());
  return (await exchange(address, rawRequest({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line, body: '' }, plainFraming('GET')))).status;
}

/** Datagrams the replica has dealt with: every wake outcome, and the verdicts that passed on to their reservation. */
async function datagramsCounted(w: PortWorld): Promise<number> {
  return (await w.count('wakes')) + (await w.count('reservations', 'unknown')) + (await w.count('reservations', 'released')) + (await w.count('reservations', 'handed_out'));
}

describe('the wake port under hostile input', () => {
  it(`refuses random and spoilt datagrams and requests, and acts on none of them (seed ${SEED})`, async () => {
    const w = await start();
    const scanner = secretScanner({ 'wake secret': SECRET, 'request body text': CANARY });
    const operationsBefore = await operationItems();
    // A wake accepted before the run: its replays are part of the input.
    const captured = encodeWake(SECRET, 'accounts', now());
    const capturedAsk = Buffer.from(encodeResultAsk(SECRET, w.queued, 0, now()), 'latin1');
    await sendDatagrams(w.address, [captured]);
    expect(await goodResultAsk(w.address, w.queued)).toBe(204);
    await vi.waitFor(async () => expect(await w.count('wakes', 'accepted')).toBe(1), WAIT);
    const capturedAskStatus = (await exchange(w.address, rawRequest({ path: RESULT_ASK_PATH, header: RESULT_ASK_HEADER, line: capturedAsk.toString('latin1'), body: '' }, plainFraming('GET')))).status;
    expect(capturedAskStatus).toBe(204);
    let runs = 0;
    let reservations = 0;

    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: 1, maxLength: 8 }), async (batch) => {
        runs++;
        // Each run holds a reservation of its own, which the spoilt verdicts aim at.
        const held = await goodReservation(w.address, `held-${runs}`);
        expect(held.status).toBe(200);
        reservations++;
        const targets: Targets = { queued: w.queued, reserved: { id: held.id, askNonce: held.askNonce }, captured: [captured, capturedAsk] };
        const accepted = await w.count('wakes', 'accepted');
        const reserved = await w.count('reservations', 'reserved');
        const heard = await datagramsCounted(w);
        const datagrams = batch.filter((h) => h.kind === 'datagram').map((h) => h.make(targets));
        const requests = batch.flatMap((h) => (h.kind === 'http' ? [{ ask: h.ask(targets), framing: h.framing }] : []));
        const raws = requests.map((r) => rawRequest(r.ask, r.framing));
        const [answers] = await Promise.all([Promise.all(raws.map((r) => exchange(w.address, r))), sendDatagrams(w.address, datagrams)]);
        const problems = answers.flatMap((answer, i) => {
          const { framing: f } = requests[i] as { framing: Framing };
          if (answer.hung) return [`request ${i + 1}: no answer within ${ANSWER_WITHIN_MS} ms`];
          // Closed without an answer: Node's way with CONNECT, and with a request whose client ended it before it was whole.
          if (answer.status === undefined) return f.then === 'end' || f.method === 'CONNECT' ? [] : [`request ${i + 1}: closed without an answer after ${answer.ms} ms`];
          return REFUSALS.has(answer.status) ? [] : [`request ${i + 1}: answered ${answer.status}`];
        });
        const counted = await vi.waitUntil(async () => ((await datagramsCounted(w)) >= heard + datagrams.length ? true : undefined), WAIT).catch(() => false);
        if (!counted) problems.push(`${heard + datagrams.length - (await datagramsCounted(w))} of ${datagrams.length} datagrams never counted`);
        if ((await w.count('wakes', 'accepted')) !== accepted) problems.push('a wake was accepted');
        if ((await w.count('reservations', 'reserved')) !== reserved) problems.push('an agent was reserved');
        if ((await w.handedOut()) !== 0) problems.push('an operation was sent to the agent');
        if (problems.length > 0) {
          const sent = [
            ...datagrams.map((d, i) => `datagram ${i + 1}: ${JSON.stringify(d.subarray(0, 300).toString('latin1'))}${d.length > 300 ? ` (${d.length} bytes)` : ''}`),
            ...raws.map((r, i) => `request ${i + 1}: ${JSON.stringify(Buffer.concat(r.parts.map((p) => p.bytes)).subarray(0, 700).toString('latin1'))} (${r.parts.length} parts, then ${r.then})`),
          ];
          throw new Error(`${problems.join('; ')}\nsent:\n${sent.join('\n')}`);
        }
        // The run's reservation is given up as the API would (unless its hold ran out first, on a slow
        // machine), and the verdict dealt with before the next run counts anything.
        const before = await datagramsCounted(w);
        await sendDatagrams(w.address, [encodeReservationVerdict(SECRET, 'release', held.id, held.askNonce, now())]);
        await vi.waitFor(async () => expect(await datagramsCounted(w)).toBe(before + 1), WAIT);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    ).catch((e: unknown) => {
      // The counterexample fast-check prints is made of functions: what they sent is in the cause.
      const head = e instanceof Error ? e.message.split('\nCounterexample')[0] : String(e);
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : '';
      throw new Error(`WAKE_FUZZ_SEED=${SEED}: ${head}\n${cause}`);
    });

    expect((await w.count('reservations', 'released')) + (await w.count('reservations', 'expired'))).toBe(reservations);
    expect({ handedOut: await w.handedOut(), reserved: await w.count('reservations', 'reserved'), named: await w.count('namedWakes') }).toEqual({ handedOut: 0, reserved: reservations, named: 0 });
    expect(await operationItems()).toEqual(operationsBefore);
    scanner.assertClean(world.driverLogs.text(), 'the replica log');

    // Still serving: a good ask, a good reservation, a good wake.
    expect(await goodResultAsk(w.address, w.queued)).toBe(204);
    const last = await goodReservation(w.address, 'after');
    expect(last.status).toBe(200);
    await sendDatagrams(w.address, [encodeReservationVerdict(SECRET, 'release', last.id, last.askNonce, now()), encodeWake(SECRET, 'accounts', now())]);
    await vi.waitFor(async () => expect(await w.count('wakes', 'accepted')).toBe(2), WAIT);
    expect(await w.handedOut()).toBe(0);
  }, 120_000);

  it('a reservation ask whose body stops short is refused and its connection closed once RESERVE_BODY_WAIT_MS has passed, not held until the server times it out (seed 2)', async () => {
    const w = await start();
    const refused = await w.count('reservations', 'malformed');
    const a = reserveAsk('cut-short');
    // The length says 50 bytes more than come; the client then waits with its side open.
    const answer = await exchange(w.address, rawRequest({ path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: a.line, body: a.body }, { ...plainFraming('POST'), framing: 'long-length' }), true);
    expect(answer).toMatchObject({ status: 403, hung: false, closed: true });
    expect({ malformed: (await w.count('reservations', 'malformed')) - refused, reserved: await w.count('reservations', 'reserved') }).toEqual({ malformed: 1, reserved: 0 });
    // The same ask whole is taken: the refusal was for the body that did not come.
    expect((await exchange(w.address, rawRequest({ path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: a.line, body: a.body }, plainFraming('POST')))).status).toBe(200);
  });

  it('a reservation ask signed over a request that is not the one its hash and action name reserves nothing (seed 21)', async () => {
    const w = await start();
    const { id, operation } = described('mismatched');
    const bodies = {
      'a JSON string for a request': { ...operation, request: Buffer.from(compress('{"action":')).toString('base64') },
      'another operation\'s request': { ...operation, request: described('another').operation.request },
      'a request of another action': { ...operation, record: { ...operation.record, action: 'delete' as const } },
      'another hash': { ...operation, requestHash: hex(32) },
    };
    for (const [what, body] of Object.entries(bodies)) {
      const text = JSON.stringify(body);
      const answer = await exchange(w.address, rawRequest({ path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: encodeReserveAsk(SECRET, id, 'prod', now(), text), body: text }, plainFraming('POST')));
      expect({ what, status: answer.status }).toEqual({ what, status: 403 });
    }
    expect({ reserved: await w.count('reservations', 'reserved'), malformed: await w.count('reservations', 'malformed') }).toEqual({ reserved: 0, malformed: Object.keys(bodies).length });
    // The operation itself, as the API describes it, is taken.
    const text = JSON.stringify(operation);
    expect((await exchange(w.address, rawRequest({ path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: encodeReserveAsk(SECRET, id, 'prod', now(), text), body: text }, plainFraming('POST')))).status).toBe(200);
  });

  it('a reservation ask signed over numbers past what the API stores reserves nothing (seed 3): handed out, they ended the agent\'s stream', async () => {
    const w = await start();
    const bodies = {
      'a time past the safe integers': (op: ReservedOperation) => ({ ...op, now: 1e300 }),
      'a time one past them': (op: ReservedOperation) => ({ ...op, now: Number.MAX_SAFE_INTEGER + 2 }),
      'a time-out past a day': (op: ReservedOperation) => ({ ...op, record: { ...op.record, timeoutMs: 1e300 } }),
      'more objects than an operation holds': (op: ReservedOperation) => ({ ...op, record: { ...op.record, objects: 501 } }),
    };
    for (const [what, make] of Object.entries(bodies)) {
      const { id, operation } = described(what.replaceAll(' ', '-'));
      const text = JSON.stringify(make(operation));
      const answer = await exchange(w.address, rawRequest({ path: RESERVE_ASK_PATH, header: RESERVE_ASK_HEADER, line: encodeReserveAsk(SECRET, id, 'prod', now(), text), body: text }, plainFraming('POST')));
      expect({ what, status: answer.status }).toEqual({ what, status: 403 });
    }
    expect({ reserved: await w.count('reservations', 'reserved'), malformed: await w.count('reservations', 'malformed') }).toEqual({ reserved: 0, malformed: Object.keys(bodies).length });
  });

  it('a request whose headers never finish is answered 408 and closed once the header bound has passed, not held until a slow sweep', async () => {
    const w = await start();
    const line = encodeResultAsk(SECRET, w.queued, 0, now());
    // Cut in the middle of its headers; the client then waits with its side open.
    const answer = await exchange(w.address, { parts: [{ bytes: Buffer.from(`GET ${RESULT_ASK_PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\n${RESULT_ASK_HEADER}: ${line.slice(0, 40)}`, 'latin1'), pauseMs: 0 }], then: 'open' }, true, HEADERS_TIMEOUT_MS * 3);
    expect(answer).toMatchObject({ status: 408, hung: false, closed: true });
  }, 30_000);
});
