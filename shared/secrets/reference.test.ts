import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isVendorError, VendorError } from '../errors.ts';
import {
  formatSecretReference,
  inspectSecretValue,
  parseSecretReference,
  type SecretReference,
} from './reference.ts';

function problemsOf(text: string): readonly string[] {
  const inspection = inspectSecretValue(text);
  if (inspection.kind !== 'invalid') throw new Error(`expected invalid, got ${inspection.kind}`);
  return inspection.problems;
}

function thrown(fn: () => unknown): VendorError {
  try {
    fn();
  } catch (e) {
    if (isVendorError(e)) return e;
    throw e;
  }
  throw new Error('expected a VendorError');
}

describe('parseSecretReference', () => {
  it('treats strings without a reference prefix as plain values', () => {
    for (const text of ['', 'hunter2', 'Encrypted:vault!e:a!p:b!k:c', ' encrypted:vault', '/etc/kube/config', 'encrypted']) {
      expect(parseSecretReference(text)).toBeUndefined();
      expect(inspectSecretValue(text)).toEqual({ kind: 'plain' });
    }
  });

  it('parses a vault reference', () => {
    expect(parseSecretReference('encrypted:vault!e:secret!p:apps/db!k:password')).toEqual({
      form: 'encrypted',
      engine: 'vault',
      params: { e: 'secret', p: 'apps/db', k: 'password' },
    });
  });

  it('parses a secrets-manager file reference whose secret is an ARN (values may hold colons)', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:kube/prod-AbCdEf';
    expect(parseSecretReference(`encryptedFile:secrets-manager!r:eu-west-1!s:${arn}!b:true`)).toEqual({
      form: 'encryptedFile',
      engine: 'secrets-manager',
      params: { r: 'eu-west-1', s: arn, b: 'true' },
    });
  });

  it('reports every problem at once, naming the engine and keys', () => {
    const error = thrown(() => parseSecretReference('encrypted:vault!e:secret!k:a!k:b!v:3!nonsense'));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toContain('engine vault');
    expect(error.issues.map((i) => i.message)).toEqual([
      'key "k" is given more than once',
      'key "v" (KV version of the mount, 1 or 2 (detected when absent)) must be 1 or 2',
      'pair 5 is not of the form key:value',
      'key "p" (path of the secret inside the mount) is missing',
    ]);
    expect(error.details).toEqual({ form: 'encrypted', engine: 'vault' });
  });

  it('rejects unknown engines, missing engines, unknown keys and empty values', () => {
    expect(problemsOf('encrypted:nosuchengine!b:bucket')).toEqual(['the engine is not known (expected one of: vault, secrets-manager, s3)']);
    expect(problemsOf('encryptedFile:!e:x')).toEqual(['the engine name is missing (expected one of: vault, secrets-manager, s3)']);
    expect(problemsOf('encrypted:secrets-manager!r:us-east-1!s:db!x:1')).toEqual([
      'pair 3 has a key that engine secrets-manager does not take (allowed: r, s, k, b)',
    ]);
    expect(problemsOf('encrypted:secrets-manager!r:us-east-1!s:')).toEqual(['key "s" (name or ARN of the secret) is empty']);
  });

  it('checks engine-specific values', () => {
    expect(problemsOf('encrypted:secrets-manager!r:mars!s:db')).toEqual([
      'key "r" (AWS region of the secret) must be an AWS region such as us-east-1',
    ]);
    expect(problemsOf('encrypted:secrets-manager!r:us-east-1!s:db name')[0]).toContain('key "s"');
    expect(problemsOf('encrypted:vault!e:secret!p:apps/../other!k:a')[0]).toContain('key "p"');
    expect(problemsOf('encrypted:vault!e:secret!p:apps//x!k:a')[0]).toContain('key "p"');
    expect(problemsOf('encrypted:vault!e:secret!p:a!k:a!b:yes')).toEqual([
      'key "b" (true when the stored value is base64 encoded) must be true or false',
    ]);
  });

  it('never repeats the text of a malformed reference in its problems', () => {
    const secretish = fc.stringMatching(/^[A-Za-z0-9+/]{12,24}$/);
    fc.assert(
      fc.property(secretish, fc.integer({ min: 0, max: 4 }), (secret, where) => {
        const texts = [
          `encrypted:${secret}`,
          `encrypted:vault!e:secret!p:db!k:a!${secret}`,
          `encrypted:vault!e:secret!p:db!k:a!${secret}:x`,
          `encryptedFile:secrets-manager!r:${secret}!s:x`,
          `encrypted:vault!e:secret!${secret}`,
        ];
        const text = texts[where] ?? '';
        const inspection = inspectSecretValue(text);
        if (inspection.kind !== 'invalid') return;
        expect(inspection.problems.join(' ')).not.toContain(secret);
      }),
    );
  });
});

describe('formatSecretReference', () => {
  it('writes keys in the engine order so equal references have equal text', () => {
    const reference: SecretReference = { form: 'encrypted', engine: 'vault', params: { k: 'pw', v: '2', p: 'db', e: 'kv' } };
    expect(formatSecretReference(reference)).toBe('encrypted:vault!e:kv!p:db!k:pw!v:2');
  });

  it('refuses to write a reference that would not parse back', () => {
    const reference: SecretReference = { form: 'encrypted', engine: 'vault', params: { e: 'kv', p: 'a!b', k: 'pw' } };
    expect(thrown(() => formatSecretReference(reference)).code).toBe('invalid_input');
  });

  it('round-trips every well-formed reference', () => {
    const segment = fc.stringMatching(/^[a-z0-9_-]{1,12}$/);
    const vaultRef = fc.record({
      e: segment,
      p: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join('/')),
      k: fc.stringMatching(/^[^!]{1,20}$/),
      form: fc.constantFrom('encrypted' as const, 'encryptedFile' as const),
    });
    fc.assert(
      fc.property(vaultRef, ({ form, ...params }) => {
        const text = formatSecretReference({ form, engine: 'vault', params });
        expect(parseSecretReference(text)).toEqual({ form, engine: 'vault', params });
      }),
    );
  });
});
