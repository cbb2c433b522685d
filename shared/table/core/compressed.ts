/**
 * Values the table keeps gzip-compressed as binary attributes: an operation's request (table.md,
 * "Operations") and the pod metrics of a namespace (table.md, "Pod metrics"). JSON of repeated field
 * names shrinks several times, and a write costs a unit per KB of the item.
 */
import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * The most a value the driver wrote from one agent message may inflate to when read. The message is
 * bounded (`driver.grpc.maxMessageBytes`), so a read stops past this rather than inflate whatever an
 * attribute holds.
 */
export const MAX_MESSAGE_JSON_BYTES = 64 * 1024 * 1024;

export function compress(value: unknown): Uint8Array {
  return gzipSync(JSON.stringify(value));
}

/** Reads a compressed value; with `maxBytes`, one that would decompress past it throws instead. */
export function decompress<T>(bytes: Uint8Array, maxBytes?: number): T {
  return JSON.parse(gunzipSync(bytes, maxBytes === undefined ? {} : { maxOutputLength: maxBytes }).toString('utf8')) as T;
}
