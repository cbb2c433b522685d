import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { createSecretResolver, type SecretResolver, type SecretResolverOptions } from '../../agent/secrets/resolver.ts';
import { capturedLog } from '../capture-log.ts';
import { leakedSecrets } from './secret-scanner.ts';

/**
 * Resolvers for one engine's test file, writing their files under one private folder and logging at
 * trace level to one file. After the file's tests, every resolver is closed and the log must show both
 * a resolved and a failed secret and none of `everySecret`.
 */
export function useSecretResolvers(everySecret: readonly string[], defaults: () => Partial<SecretResolverOptions>): (options?: Partial<SecretResolverOptions>) => SecretResolver {
  const log = capturedLog('json');
  const work = mkdtempSync(join(tmpdir(), 'secrets-test-'));
  const resolvers: SecretResolver[] = [];
  afterAll(async () => {
    await Promise.all(resolvers.map((r) => r.close()));
    const text = log.text();
    expect(text).toContain('resolved secret');
    expect(text).toContain('cannot resolve secret');
    expect(leakedSecrets(text, everySecret)).toEqual([]);
    log.remove();
    rmSync(work, { recursive: true, force: true });
  });
  return (options = {}) => {
    const created = createSecretResolver(undefined, { logger: log.logger, cacheTtlMs: 0, tempDir: work, env: {}, ...defaults(), ...options });
    resolvers.push(created);
    return created;
  };
}
