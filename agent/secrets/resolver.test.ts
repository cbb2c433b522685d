import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as v from 'valibot';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { startVaultDouble, type VaultDouble } from '../../test/doubles/vault.ts';
import { SecretsConfigSchema } from './config.ts';
import { createSecretResolver, DEFAULT_SECRET_CACHE_TTL_MS, type SecretResolver } from './resolver.ts';
import { capturedLog } from '../../test/capture-log.ts';
import { leakedSecrets, secretFailure } from '../../test/support/secret-scanner.ts';

const TOKEN = 'hvs.resolver-test-token-4b2a';
const KUBECONFIG_V1 = 'apiVersion: v1\nkind: Config\n# first-kube-secret-11aa\n';
const KUBECONFIG_V2 = 'apiVersion: v1\nkind: Config\n# second-kube-secret-22bb\n';
const everySecret = [TOKEN, 'first-kube-secret-11aa', 'second-kube-secret-22bb', 'db-password-33cc'];

const log = capturedLog('json');
const work = mkdtempSync(join(tmpdir(), 'resolver-test-'));
let clock: ManualClock;
let vault: VaultDouble;
let secrets: SecretResolver;

const fileRef = 'encryptedFile:vault!e:secret!p:kube/prod!k:kubeconfig';
const valueRef = 'encrypted:vault!e:secret!p:kube/prod!k:kubeconfig';
const reads = () => vault.requests.filter((r) => r.path === '/v1/secret/data/kube/prod').length;
const failure = (promise: Promise<unknown>) => secretFailure(promise, everySecret);

beforeEach(async () => {
  clock = new ManualClock(1_000_000);
  vault = await startVaultDouble({ clock });
  vault.mountKv('secret', 2);
  vault.putSecret('secret', 'kube/prod', { kubeconfig: KUBECONFIG_V1, path: '/etc/vendor/kubeconfig', password: 'db-password-33cc' });
  vault.addToken(TOKEN, { paths: ['secret/data/kube/*'] });
  const config = v.parse(SecretsConfigSchema, { vault: { enabled: true, url: vault.url, token: TOKEN } });
  secrets = createSecretResolver(config, { logger: log.logger, clock, tempDir: work, env: {} });
});

afterEach(async () => {
  await secrets.close();
  await vault.close();
});

afterAll(() => {
  const text = log.text();
  expect(text).toContain('"reference":"encrypted:vault!e:secret!p:kube/prod!k:kubeconfig"');
  expect(leakedSecrets(text, everySecret)).toEqual([]);
  log.remove();
  rmSync(work, { recursive: true, force: true });
});

describe('createSecretResolver', () => {
  it('returns plain values and plain paths unchanged without asking any engine', async () => {
    expect(await secrets.resolve('just-a-value')).toBe('just-a-value');
    expect(await secrets.resolveFile('/etc/kube/config')).toBe('/etc/kube/config');
    expect(vault.requests).toEqual([]);
  });

  it('refuses a malformed reference before asking any engine', async () => {
    const error = await failure(secrets.resolve('encrypted:vault!e:secret!k:kubeconfig'));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe('invalid encrypted reference to engine vault: key "p" (path of the secret inside the mount) is missing');
    expect(vault.requests).toEqual([]);
  });

  it('refuses a file reference where a string is expected', async () => {
    const error = await failure(secrets.resolve(fileRef));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe(`${fileRef}: encryptedFile: references are allowed only where a file path is expected`);
  });

  it('says that vault is not enabled when a vault reference meets a configuration without it', async () => {
    const bare = createSecretResolver(undefined, { logger: log.logger, clock, tempDir: work, env: {} });
    const error = await failure(bare.resolve(valueRef));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe(`cannot resolve secret ${valueRef}: secrets.vault.enabled is not true in vendor-agent.yml, so vault references cannot be resolved`);
    await bare.close();
  });

  it('resolves an encrypted: reference in a file setting to the path the secret holds', async () => {
    expect(await secrets.resolveFile('encrypted:vault!e:secret!p:kube/prod!k:path')).toBe('/etc/vendor/kubeconfig');
  });

  it('refuses to hand out file content as a path when encrypted: names a whole file', async () => {
    const error = await failure(secrets.resolveFile(valueRef));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe(`cannot resolve secret ${valueRef}: its value is not a file path; use encryptedFile: to have it written to a file`);
  });

  it('writes an encryptedFile: secret to an owner-only file in an owner-only folder', async () => {
    const path = await secrets.resolveFile(fileRef);
    expect(readFileSync(path, 'utf8')).toBe(KUBECONFIG_V1);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(dirname(dirname(path))).toBe(work);
    expect(path).not.toContain('kube');
  });

  it('reuses a secret within the cache TTL for both forms, then reads it again and refreshes the same file', async () => {
    const first = await secrets.resolveFile(fileRef);
    expect(await secrets.resolve(valueRef)).toBe(KUBECONFIG_V1);
    expect(await secrets.resolveFile(fileRef)).toBe(first);
    expect(reads()).toBe(1);

    vault.putSecret('secret', 'kube/prod', { kubeconfig: KUBECONFIG_V2 });
    await clock.advance(DEFAULT_SECRET_CACHE_TTL_MS - 1);
    expect(await secrets.resolve(valueRef)).toBe(KUBECONFIG_V1);
    await clock.advance(1);
    expect(await secrets.resolveFile(fileRef)).toBe(first);
    expect(readFileSync(first, 'utf8')).toBe(KUBECONFIG_V2);
    expect(statSync(first).mode & 0o777).toBe(0o600);
    expect(reads()).toBe(2);
  });

  it('shares one read between concurrent requests for the same secret', async () => {
    const values = await Promise.all([secrets.resolve(valueRef), secrets.resolve(valueRef), secrets.resolveFile(fileRef)]);
    expect(values[0]).toBe(KUBECONFIG_V1);
    expect(values[1]).toBe(KUBECONFIG_V1);
    expect(reads()).toBe(1);
  });

  it('does not remember failures', async () => {
    const ref = 'encrypted:vault!e:secret!p:kube/staging!k:kubeconfig';
    expect((await failure(secrets.resolve(ref))).code).toBe('not_found');
    vault.putSecret('secret', 'kube/staging', { kubeconfig: KUBECONFIG_V2 });
    expect(await secrets.resolve(ref)).toBe(KUBECONFIG_V2);
  });

  it('removes its files on close and refuses to resolve afterwards', async () => {
    const path = await secrets.resolveFile(fileRef);
    await secrets.close();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(dirname(path))).toBe(false);
    const error = await failure(secrets.resolve(valueRef));
    expect(error.code).toBe('unavailable');
    expect(error.message).toContain('the secret resolver is closed');
  });
});
