/**
 * The bytes of an `AgentMessage` that carries resource events, with the changes written by hand.
 *
 * A burst of watch events reaches the driver as batches of up to hundreds of `ResourceChange`s. The
 * generic protobuf encoder copies each change into a message object and builds a list of write
 * operations per field before writing (objects and garbage per change, on the agent's main thread);
 * here the changes' fields go straight into a buffer. The cache's batcher writes each change into
 * its batch's buffer as it comes (`EncodedChanges`), so a batch waiting for the driver holds one
 * buffer outside the JavaScript heap instead of its changes' strings: in the agent's small young
 * generation (`--max-semi-space-size=2`) those outlived a few collections and were promoted, and
 * the old generation's collections that followed were a large share of the agent's CPU in a burst.
 * The rest of the message (sequence numbers, account, epoch, syncs, progress, health) is still
 * encoded by the generic encoder.
 *
 * The result decodes to the same message: protobuf fields may come in any order, and the elements of
 * a repeated field keep theirs, so the changes (field 3 of `ResourceEvents`) follow the other fields
 * of the same `ResourceEvents` (field 14 of `AgentMessage`).
 */
import type { AgentMessage, ResourceEvents } from '../../shared/protocol/messages.ts';
import type { ResourceChange } from '../../shared/protocol/generated/vendor/agent/v1/ResourceChange.ts';

/** `AgentMessage.resource_events` (field 14), length-delimited. */
const RESOURCE_EVENTS_TAG = (14 << 3) | 2;
/** `ResourceEvents.changes` (field 3), length-delimited. */
const CHANGE_TAG = (3 << 3) | 2;
/** `ResourceChange.deleted` (field 6), varint. */
const DELETED_TAG = 6 << 3;
/** The string fields of `ResourceChange` by field number (6 is `deleted`). */
const STRING_FIELDS = [
  [1, 'group'],
  [2, 'kind'],
  [3, 'namespace'],
  [4, 'name'],
  [5, 'resourceVersion'],
  [7, 'object'],
] as const;

function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

function writeVarint(buf: Buffer, pos: number, v: number): number {
  while (v >= 0x80) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

/** Bytes of one change's fields (its message body), with the UTF-8 length of each string kept in `lengths`. */
function changeSize(c: ResourceChange, lengths: number[]): number {
  let size = c.deleted === true ? 2 : 0;
  for (const [, field] of STRING_FIELDS) {
    const s = c[field];
    const len = s ? Buffer.byteLength(s) : 0;
    lengths.push(len);
    if (len > 0) size += 1 + varintSize(len) + len;
  }
  return size;
}

function writeChange(buf: Buffer, pos: number, c: ResourceChange, size: number, lengths: number[], at: number): number {
  buf[pos++] = CHANGE_TAG;
  pos = writeVarint(buf, pos, size);
  for (let i = 0; i < STRING_FIELDS.length; i++) {
    const len = lengths[at + i]!;
    if (len === 0) continue;
    const [number, field] = STRING_FIELDS[i]!;
    buf[pos++] = (number << 3) | 2;
    pos = writeVarint(buf, pos, len);
    pos += buf.write(c[field]!, pos, len, 'utf8');
  }
  if (c.deleted === true) {
    buf[pos++] = DELETED_TAG;
    buf[pos++] = 1;
  }
  return pos;
}

/** Changes written as `ResourceEvents.changes` entries, one after the other, into a buffer of their own. */
export class EncodedChanges {
  #buf = Buffer.allocUnsafeSlow(16 * 1024);
  #length = 0;
  #count = 0;
  readonly #lengths: number[] = [];

  get count(): number {
    return this.#count;
  }

  append(c: ResourceChange): void {
    this.#lengths.length = 0;
    const size = changeSize(c, this.#lengths);
    const need = this.#length + 1 + varintSize(size) + size;
    if (need > this.#buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, this.#buf.length * 2));
      this.#buf.copy(grown, 0, 0, this.#length);
      this.#buf = grown;
    }
    this.#length = writeChange(this.#buf, this.#length, c, size, this.#lengths, 0);
    this.#count++;
  }

  /** The entries written so far. */
  bytes(): Buffer {
    return this.#buf.subarray(0, this.#length);
  }
}

/** Resource events whose changes travel as bytes (their `changes` list stays empty). */
const encoded = new WeakMap<ResourceEvents, Buffer>();

/** `body` with `changes` as its changes, written after any in its `changes` list. */
export function withEncodedChanges(body: ResourceEvents, changes: EncodedChanges): ResourceEvents {
  encoded.set(body, changes.bytes());
  return body;
}

/**
 * The bytes of `m`, made by `serialize` (the protocol's generic encoder) except for the changes of
 * its resource events, when it has any.
 */
export function encodeAgentMessage(m: AgentMessage, serialize: (m: AgentMessage) => Buffer): Buffer {
  const events = m.resourceEvents;
  if (events === undefined || events === null) return serialize(m);
  const changes = events.changes ?? [];
  const written = encoded.get(events);
  if (changes.length === 0 && written === undefined) return serialize(m);
  const head = serialize({ seq: m.seq, ackSeq: m.ackSeq });
  const rest = serialize({ resourceEvents: { ...events, changes: [] } });
  // `rest` is field 14 alone: its tag, its length, then the other fields of the resource events.
  let start = 1;
  while ((rest[start++]! & 0x80) !== 0);
  const lengths: number[] = [];
  const sizes = changes.map((c) => changeSize(c, lengths));
  let eventsSize = rest.length - start + (written?.length ?? 0);
  for (const size of sizes) eventsSize += 1 + varintSize(size) + size;
  const out = Buffer.allocUnsafe(head.length + 1 + varintSize(eventsSize) + eventsSize);
  let pos = head.copy(out, 0);
  out[pos++] = RESOURCE_EVENTS_TAG;
  pos = writeVarint(out, pos, eventsSize);
  pos += rest.copy(out, pos, start);
  for (let i = 0; i < changes.length; i++) pos = writeChange(out, pos, changes[i]!, sizes[i]!, lengths, i * STRING_FIELDS.length);
  if (written !== undefined) written.copy(out, pos);
  return out;
}
