import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** The last few of each: a day's signing key and the secret access key, per region and credentials. */
const CACHE_SIZE = 16;

function remember<V>(cache: Map<string, V>, id: string, make: () => V): V {
  let value = cache.get(id);
  if (value === undefined) {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    value = make();
    cache.set(id, value);
  }
  return value;
}

/**
 * Node builds an HMAC from raw key bytes several times slower than from a KeyObject (it looks the bytes
 * over for a key object first), and SigV4 keys by the same few secrets all day: each is made a
 * KeyObject once.
 */
const keys = new Map<string, KeyObject>();

/**
 * SigV4 takes, on every request, the HMAC of the access key id under the secret access key (to find its
 * cached signing key): the same short message under the same key, so the same digest. Digests of
 * messages this short are kept; a request's signature (its string to sign is longer) never is.
 */
const SHORT_MESSAGE_BYTES = 64;
const shortDigests = new Map<string, Buffer>();

/**
 * The SHA-256 and HMAC-SHA256 the table client signs requests with (SigV4): the same digests as the
 * SDK's own (`@smithy/core` `Sha256Node`), taken in one call over what it was given (SigV4 hashes and
 * signs whole strings), with each HMAC key made once and the HMACs of short messages kept
 * (docs/table.md#the-client).
 */
export class TableSha256 {
  readonly digestLength = 32;
  /** As the SDK's: no secret, or an empty string, is a plain hash. */
  readonly #secret: Buffer | undefined;
  #parts: Buffer[] = [];
  #finished = false;

  constructor(secret?: SourceData) {
    this.#secret = secret === undefined || secret === '' ? undefined : bytesOf(secret);
  }

  update(data: SourceData): void {
    if (this.#finished) throw new Error('Attempted to update an already finished hash.');
    // A kept part is a copy: the caller may reuse its buffer before the digest.
    this.#parts.push(typeof data === 'string' ? bytesOf(data) : Buffer.from(bytesOf(data)));
  }

  async digest(): Promise<Uint8Array> {
    const message = this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts);
    const secret = this.#secret;
    let out: Buffer;
    if (secret === undefined) {
      // A plain hash may go on after a digest, as the SDK's does: its parts stay.
      out = hash('sha256', message, 'buffer');
    } else {
      this.#finished = true;
      const hmac = () => createHmac('sha256', secret.length === 0 ? secret : remember(keys, secret.toString('base64'), () => createSecretKey(secret))).update(message).digest();
      out = message.length <= SHORT_MESSAGE_BYTES ? remember(shortDigests, `${secret.toString('base64')}:${message.toString('base64')}`, hmac) : hmac();
    }
    // A copy: the caller owns what it is given, and a kept digest must not change.
    return new Uint8Array(out);
  }

  reset(): void {
    this.#parts = [];
    this.#finished = false;
  }
}
