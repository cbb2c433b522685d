import { describe, expect, it } from 'vitest';
import { parseWakeAddress, formatWakeAddress } from './address.ts';
import { encodeWake, verifyWake } from './message.ts';
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
