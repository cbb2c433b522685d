import { createHmac, createSecretKey, hash, type Hmac, type KeyObject } from 'node:crypto';

type SourceData = string | ArrayBuffer | ArrayBufferView;

function bytesOf(data: SourceData): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

/** Keys of the last few distinct secrets: a day's signing key and the secret access key, per region and credentials. */
const KEY_CACHE_SIZE = 16;
const keys = new Map<string, KeyObject>();

/**
 * Node builds an HMAC from raw key bytes several times slower than from a KeyObject (it looks the bytes
 * over for a key object first), and SigV4 keys by the same few secrets all day: each is made a
 * KeyObject once.
 */
function keyOf(bytes: Buffer): KeyObject {
  const id = bytes.toString('base64');
  let key = keys.get(id);
  if (key === undefined) {
    if (keys.size >= KEY_CACHE_SIZE) keys.delete(keys.keys().next().value as string);
    key = createSecretKey(bytes);
    keys.set(id, key);
  }
  return key;
}

/**
 * The SHA-256 and HMAC-SHA256 the table client signs requests with (SigV4): the same digests as the
 * SDK's own (`@smithy/core` `Sha256Node`), with each HMAC key made once and a plain hash taken in one
 * call over what it was given (SigV4 hashes a payload and a canonical request whole), instead of a
 * hash object and its copy each (docs/table.md#the-client).
 */
export class TableSha256 {
  readonly digestLength = 32;
  /** As the SDK's: no secret, or an empty string, is a plain hash. */
  readonly #secret: Buffer | undefined;
  #hmac: Hmac | undefined;
  #parts: Buffer[] = [];
  #finished = false;

  constructor(secret?: SourceData) {
    this.#secret = secret === undefined || secret === '' ? undefined : bytesOf(secret);
    this.reset();
  }

  update(data: SourceData): void {
    if (this.#finished) throw new Error('Attempted to update an already finished hash.');
    const bytes = bytesOf(data);
    // A kept part is a copy: the caller may reuse its buffer before the digest.
    if (this.#hmac === undefined) this.#parts.push(typeof data === 'string' ? bytes : Buffer.from(bytes));
    else this.#hmac.update(bytes);
  }

  async digest(): Promise<Uint8Array> {
    let out: Buffer;
    if (this.#hmac === undefined) {
      // A plain hash may go on after a digest, as the SDK's does: its parts stay.
      out = hash('sha256', this.#parts.length === 1 ? (this.#parts[0] as Buffer) : Buffer.concat(this.#parts), 'buffer');
    } else {
      this.#finished = true;
      out = this.#hmac.digest();
    }
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }

  reset(): void {
    this.#parts = [];
    this.#finished = false;
    if (this.#secret === undefined) this.#hmac = undefined;
    // An empty key is no key object; it is rare enough to take the slow way.
    else this.#hmac = createHmac('sha256', this.#secret.length === 0 ? this.#secret : keyOf(this.#secret));
  }
}
