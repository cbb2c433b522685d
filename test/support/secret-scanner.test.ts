import { describe, expect, it } from 'vitest';
import { secretScanner } from './secret-scanner.ts';

const TOKEN = 'tok-0123456789abcdef-secret';
const PEM = ['-----BEGIN PRIVATE KEY-----', 'MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1234567890abcdef', 'hRANCAAT0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/ab', '-----END PRIVATE KEY-----'].join('\n');

describe('secretScanner', () => {
  const scanner = secretScanner({ 'admin token': TOKEN, 'signing key': PEM, 'kubeconfig': 'apiVersion: v1\nusers:\n- user:\n    token: kube-secret-token-value-42\n' });

  it('finds a secret as given and in the forms it travels in', () => {
    expect(scanner.check(`Bearer ${TOKEN}`)).toEqual([{ secret: 'admin token', form: 'raw' }]);
    expect(scanner.check(encodeURIComponent(`x=${PEM}`))).toContainEqual({ secret: 'signing key', form: 'percent' });
    expect(scanner.check(JSON.stringify({ log: PEM }))).toContainEqual({ secret: 'signing key', form: 'json' });
    expect(scanner.check(Buffer.from(TOKEN).toString('base64'))).toEqual([{ secret: 'admin token', form: 'base64' }]);
    // A value whose base64 holds `+`, which base64url spells `-`.
    const binaryish = secretScanner({ key: 'key>>>key>>>key>>>' });
    expect(binaryish.check(`data: ${Buffer.from('key>>>key>>>key>>>').toString('base64url')}`)).toEqual([{ secret: 'key', form: 'base64url' }]);
  });

  it('finds one line of a multi-line secret, but not the PEM armour every key shares', () => {
    expect(scanner.check('…hRANCAAT0123456789abcdefABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/ab…')).toEqual([{ secret: 'signing key', form: 'line' }]);
    expect(scanner.check('token: kube-secret-token-value-42')).toEqual([{ secret: 'kubeconfig', form: 'line' }]);
    expect(scanner.check('-----BEGIN PRIVATE KEY-----')).toEqual([]);
  });

  it('is quiet about clean text, and names the secret (never its value) when not', () => {
    expect(scanner.check('{"status":401,"detail":"a valid bearer token is required"}')).toEqual([]);
    expect(() => scanner.assertClean(`oops ${TOKEN}`, 'the log')).toThrow(/^secret found in the log: admin token \(raw\)$/);
    try {
      scanner.assertClean(`oops ${TOKEN}`, 'the log');
    } catch (err) {
      expect(String(err)).not.toContain(TOKEN);
    }
  });

  it('refuses secrets too short to look for, and takes more later', () => {
    expect(() => secretScanner({ pin: '1234' })).toThrow(/too short/);
    const later = secretScanner();
    later.add({ minted: 'minted-token-abcdefghijkl' });
    expect(later.check('x minted-token-abcdefghijkl x')).toHaveLength(1);
  });
});
