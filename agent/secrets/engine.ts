import { VendorError } from '../../shared/errors.ts';

/** What each secret engine offers the resolver: the bytes a reference's keys point at. */
export interface SecretEngine {
  /** @throws VendorError whose message says why, naming where the secret lives but never its value. */
  read(params: Readonly<Record<string, string>>): Promise<Buffer>;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A stored value as bytes: strings as UTF-8 (or decoded from base64 when the reference says
 * `b:true`), numbers and booleans as their text, objects and lists as JSON.
 */
export function storedValueBytes(value: unknown, base64: boolean): Buffer {
  if (value instanceof Uint8Array) return Buffer.from(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  if (!base64) return Buffer.from(text, 'utf8');
  const compact = text.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) {
    throw new VendorError('invalid_input', 'the reference says b:true but the stored value is not base64');
  }
  return Buffer.from(compact, 'base64');
}
