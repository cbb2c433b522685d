/**
 * The bytes of an `AgentMessage` that carries resource events, with the changes written by hand.
 *
 * A burst of watch events reaches the driver as batches of up to hundreds of `ResourceChange`s. The
 * generic protobuf encoder copies each change into a message object and builds a list of write
 * operations per field before writing: a dozen objects per change on the agent's main thread, a
 * fifth of what that thread allocated in a burst (measured with V8's sampling heap profiler), in a
 * young generation of 2 MiB (`--max-semi-space-size=2`) where every collection promotes what is
 * still waiting for the driver. Here the changes' fields go straight into the message's buffer; the
 * rest of the message (sequence numbers, account, epoch, syncs, progress, health) is still encoded
 * by the generic encoder.
 *
 * The result decodes to the same message: protobuf fields may come in any order, and the elements of
 * a repeated field keep theirs, so the changes (field 3 of `ResourceEvents`) follow the other fields
 * of the same `ResourceEvents` (field 14 of `AgentMessage`). Fields at their default (an empty
 * string, `deleted: false`) are left out, as proto3 allows.
 */
import type { AgentMessage } from '../../shared/protocol/messages.ts';
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

/**
 * The bytes of `m`, made by `serialize` (the protocol's generic encoder) except for the changes of
 * its resource events, when it has any.
 */
export function encodeAgentMessage(m: AgentMessage, serialize: (m: AgentMessage) => Buffer): Buffer {
  const events = m.resourceEvents;
  const changes = events?.changes;
  if (events === undefined || events === null || changes === undefined || changes.length === 0) return serialize(m);
  const head = serialize({ seq: m.seq, ackSeq: m.ackSeq });
  const rest = serialize({ resourceEvents: { ...events, changes: [] } });
  // `rest` is field 14 alone: its tag, its length, then the other fields of the resource events.
  let start = 1;
  while ((rest[start++]! & 0x80) !== 0);
  const lengths: number[] = [];
  const sizes = changes.map((c) => changeSize(c, lengths));
  let eventsSize = rest.length - start;
  for (const size of sizes) eventsSize += 1 + varintSize(size) + size;
  const out = Buffer.allocUnsafe(head.length + 1 + varintSize(eventsSize) + eventsSize);
  let pos = head.copy(out, 0);
  out[pos++] = RESOURCE_EVENTS_TAG;
  pos = writeVarint(out, pos, eventsSize);
  pos += rest.copy(out, pos, start);
  for (let i = 0; i < changes.length; i++) pos = writeChange(out, pos, changes[i]!, sizes[i]!, lengths, i * STRING_FIELDS.length);
  return out;
}
