import { createHash, createHmac, createSecretKey, type Hash, type Hmac, type KeyObject } from 'node:crypto';

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
function keyOf(secret: SourceData): KeyObject {
  const bytes = bytesOf(secret);
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
 * SDK's own (`@smithy/core` `Sha256Node`), with each HMAC key made once (docs/table.md#the-client).
 */
export class TableSha256 {
  readonly digestLength = 32;
  /** As the SDK's: no secret, or an empty string, is a plain hash. */
  readonly #secret: SourceData | undefined;
  #hash: Hash | Hmac;
  #finished = false;

  constructor(secret?: SourceData) {
    this.#secret = secret === '' ? undefined : secret;
    this.#hash = this.#create();
  }

  update(data: SourceData): void {
    if (this.#finished) throw new Error('Attempted to update an already finished hash.');
    this.#hash.update(typeof data === 'string' ? data : bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    let out: Buffer;
    if (this.#secret === undefined) {
      // A plain hash may go on after a digest, as the SDK's does.
      out = (this.#hash as Hash).copy().digest();
    } else {
      this.#finished = true;
      out = this.#hash.digest();
    }
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }

  reset(): void {
    this.#hash = this.#create();
    this.#finished = false;
  }

  #create(): Hash | Hmac {
    if (this.#secret === undefined) return createHash('sha256');
    // An empty key is no key object; it is rare enough to take the slow way.
    const empty = typeof this.#secret !== 'string' && bytesOf(this.#secret).length === 0;
    return createHmac('sha256', empty ? bytesOf(this.#secret) : keyOf(this.#secret));
  }
}
