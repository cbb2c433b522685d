import { describe, expect, it } from 'vitest';
import { parseWakeAddress, formatWakeAddress } from './address.ts';
import { encodeWake, MAX_WAKE_BYTES, verifyWake } from './message.ts';
import { wakeSecretFromEnv } from './secret.ts';

const SECRET = 'message-test-secret-0123456789abcdef';

describe('wake datagrams', () => {
  it('verify under the secret they were signed with, and only under it', () => {
    const d = encodeWake(SECRET, 'accounts', 1_700_000_000_123, 'ab'.repeat(16));
    expect(verifyWake(SECRET, d)).toEqual({ topic: 'accounts', at: 1_700_000_000_123, nonce: 'ab'.repeat(16) });
    expect(verifyWake(`${SECRET}x`, d)).toBe('forged');
    const changedTime = Buffer.from(d.toString('latin1').replace('1700000000123', '1700000000124'), 'latin1');
    expect(verifyWake(SECRET, changedTime)).toBe('forged');
  });

  it('refuse anything not shaped as a wake, without reading past the size bound', () => {
    expect(verifyWake(SECRET, Buffer.from(''))).toBe('malformed');
    expect(verifyWake(SECRET, Buffer.from(`vw1 deploy 1 ${'a'.repeat(32)} ${'b'.repeat(64)}`))).toBe('malformed');
    expect(verifyWake(SECRET, Buffer.concat([encodeWake(SECRET, 'accounts', 1), Buffer.alloc(200, 32)]))).toBe('malformed');
  });

  it('carry nothing but the topic, the time and a nonce', () => {
    expect(encodeWake(SECRET, 'operations', 5).toString('latin1')).toMatch(/^vw1 operations 5 [0-9a-f]{32} [0-9a-f]{64}$/);
    expect(encodeWake(SECRET, 'operations', 5).toString('latin1')).not.toContain(SECRET);
  });
});

describe('named wakes', () => {
  const id = 'c0ffee'.padEnd(32, '0');
  const hash = 'ab'.repeat(32);

  it('carry the operation, its account and, for a request stored apart, its hash, under the signature', () => {
    const d = encodeWake(SECRET, 'operations', 5, 'cd'.repeat(16), { id, account: 'prod.eu-1', requestHash: hash });
    expect(d.toString('latin1')).toMatch(new RegExp(`^vw1 operations 5 ${'cd'.repeat(16)} ${id} prod\\.eu-1 ${hash} [0-9a-f]{64}$`));
    expect(verifyWake(SECRET, d)).toEqual({ topic: 'operations', at: 5, nonce: 'cd'.repeat(16), operation: { id, account: 'prod.eu-1', requestHash: hash } });
    expect(verifyWake(SECRET, encodeWake(SECRET, 'operations', 5, 'cd'.repeat(16), { id, account: 'prod' }))).toMatchObject({ operation: { id, account: 'prod' } });
    // Any part of the name changed, added or dropped: the signature no longer matches.
    const text = d.toString('latin1');
    for (const altered of [text.replace(' prod.eu-1 ', ' prod.eu-2 '), text.replace(id, id.replace('c0', 'c1')), text.replace(` ${hash}`, ''), text.replace(hash, 'cd'.repeat(32))]) {
      expect(verifyWake(SECRET, Buffer.from(altered, 'latin1'))).toBe('forged');
    }
    const plain = encodeWake(SECRET, 'operations', 5, 'cd'.repeat(16)).toString('latin1');
    expect(verifyWake(SECRET, Buffer.from(plain.replace(` ${plain.slice(-64)}`, ` ${id} prod ${plain.slice(-64)}`), 'latin1'))).toBe('forged');
  });

  it('name no operation on the accounts topic, nor a name that is malformed or too long for the datagram', () => {
    const crossed = verifyWake(SECRET, encodeWake(SECRET, 'accounts', 5, undefined, { id, account: 'prod' }));
    expect(crossed).not.toHaveProperty('operation');
    expect(crossed).not.toHaveProperty('account');
    for (const bad of [{ id: 'not-an-id', account: 'prod' }, { id, account: 'has space' }, { id, account: 'a'.repeat(254) }, { id, account: 'prod', requestHash: 'xyz' }]) {
      const d = encodeWake(SECRET, 'operations', 5, undefined, bad);
      expect(d.toString('latin1')).toMatch(/^vw1 operations 5 [0-9a-f]{32} [0-9a-f]{64}$/);
    }
    // The longest name there can be fits: a 253-character account and a request hash.
    const longest = encodeWake(SECRET, 'operations', Date.now(), undefined, { id, account: 'a'.repeat(253), requestHash: hash });
    expect(longest.length).toBeLessThanOrEqual(MAX_WAKE_BYTES);
    expect(verifyWake(SECRET, longest)).toMatchObject({ operation: { account: 'a'.repeat(253) } });
    // A name on an accounts wake is not a wake, even signed.
    expect(verifyWake(SECRET, Buffer.from(encodeWake(SECRET, 'operations', 5, undefined, { id, account: 'prod' }).toString('latin1').replace('operations', 'accounts'), 'latin1'))).toBe('malformed');
  });

  it('carry the one account an accounts wake names, under the signature', () => {
    const d = encodeWake(SECRET, 'accounts', 5, 'cd'.repeat(16), { account: 'prod.eu-1' });
    expect(d.toString('latin1')).toMatch(new RegExp(`^vw1 accounts 5 ${'cd'.repeat(16)} prod\\.eu-1 [0-9a-f]{64}$`));
    expect(verifyWake(SECRET, d)).toEqual({ topic: 'accounts', at: 5, nonce: 'cd'.repeat(16), account: 'prod.eu-1' });
    // An account whose name looks like an operation id is still an account.
    expect(verifyWake(SECRET, encodeWake(SECRET, 'accounts', 5, undefined, { account: id }))).toMatchObject({ account: id });
    // The name changed, added to an unnamed wake, or dropped: the signature no longer matches.
    const text = d.toString('latin1');
    expect(verifyWake(SECRET, Buffer.from(text.replace(' prod.eu-1 ', ' prod.eu-2 '), 'latin1'))).toBe('forged');
    const plain = encodeWake(SECRET, 'accounts', 5, 'cd'.repeat(16)).toString('latin1');
    expect(verifyWake(SECRET, Buffer.from(plain.replace(` ${plain.slice(-64)}`, ` prod ${plain.slice(-64)}`), 'latin1'))).toBe('forged');
    expect(verifyWake(SECRET, Buffer.from(text.replace(' prod.eu-1 ', ' '), 'latin1'))).toBe('forged');
    // An account on an operations wake, or a name that is not an account's: no name.
    expect(encodeWake(SECRET, 'operations', 5, undefined, { account: 'prod' }).toString('latin1')).toMatch(/^vw1 operations 5 [0-9a-f]{32} [0-9a-f]{64}$/);
    for (const bad of ['has space', 'a'.repeat(254), '', 'ü']) {
      expect(encodeWake(SECRET, 'accounts', 5, undefined, { account: bad }).toString('latin1')).toMatch(/^vw1 accounts 5 [0-9a-f]{32} [0-9a-f]{64}$/);
    }
    // The longest account name fits the datagram.
    const longest = encodeWake(SECRET, 'accounts', Date.now(), undefined, { account: 'a'.repeat(253) });
    expect(longest.length).toBeLessThanOrEqual(MAX_WAKE_BYTES);
    expect(verifyWake(SECRET, longest)).toMatchObject({ account: 'a'.repeat(253) });
  });
});

describe('the wake secret', () => {
  it('comes from VENDOR_WAKE_SECRET, else the SST link, and is refused when short, without its value in the message', () => {
    expect(wakeSecretFromEnv({})).toBeUndefined();
    expect(wakeSecretFromEnv({ VENDOR_WAKE_SECRET: SECRET })).toBe(SECRET);
    expect(wakeSecretFromEnv({ SST_RESOURCE_VendorWakeSecret: JSON.stringify({ type: 'sst.sst.Secret', value: SECRET }) })).toBe(SECRET);
    expect(() => wakeSecretFromEnv({ VENDOR_WAKE_SECRET: 'short-secret' })).toThrow(/at least 32 characters/);
    try {
      wakeSecretFromEnv({ VENDOR_WAKE_SECRET: 'short-secret' });
    } catch (e) {
      expect((e as Error).message).not.toContain('short-secret');
    }
  });
});

describe('wake addresses', () => {
  it('round-trip host and port, IPv6 in brackets, and refuse anything else', () => {
    expect(parseWakeAddress(formatWakeAddress('10.0.1.5', 9092))).toEqual({ host: '10.0.1.5', port: 9092 });
    expect(parseWakeAddress(formatWakeAddress('fd00::1', 9092))).toEqual({ host: 'fd00::1', port: 9092 });
    expect(parseWakeAddress('driver.internal:9092')).toEqual({ host: 'driver.internal', port: 9092 });
    for (const bad of ['10.0.1.5', '10.0.1.5:0', '10.0.1.5:70000', 'a b:1', 'fd00::1:9092']) expect(parseWakeAddress(bad)).toBeUndefined();
  });
});
