import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as v from 'valibot';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { startVaultDouble, type VaultDouble } from '../../test/doubles/vault.ts';
import { selfSignedCertificate } from '../../test/support/pki.ts';
import { SecretsConfigSchema } from './config.ts';
import { createSecretResolver, type SecretResolver } from './resolver.ts';
import { capturedLog } from '../../test/capture-log.ts';
import { leakedSecrets, secretFailure } from '../../test/support/secret-scanner.ts';

const DB_PASSWORD = 'v2-db-password-5f1c9e';
const LEGACY_PASSWORD = 'v1-legacy-password-a83b';
const ROOT_TOKEN = 'hvs.configured-token-0f3a77';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.service-account-jwt.c2lnbmF0dXJl';
const APPROLE_SECRET_ID = 'approle-secret-id-77e0d2';
const USER_PASSWORD = 'userpass-password-1c2d3e';
const KUBECONFIG = 'apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: kube-token-9d8c7b\n';

const log = capturedLog('text');
const everySecret = new Set([DB_PASSWORD, LEGACY_PASSWORD, ROOT_TOKEN, JWT, APPROLE_SECRET_ID, USER_PASSWORD, 'kube-token-9d8c7b']);
const work = mkdtempSync(join(tmpdir(), 'vault-test-'));
const jwtFile = join(work, 'token');
writeFileSync(jwtFile, `${JWT}\n`);

let clock: ManualClock;
let vault: VaultDouble;
const resolvers: SecretResolver[] = [];

const READ_ALL = ['secret/data/apps/*', 'secret/data/kube/*', 'kv/apps/*'];

beforeEach(async () => {
  clock = new ManualClock(1_700_000_000_000);
  vault = await startVaultDouble({ clock });
  vault.mountKv('secret', 2);
  vault.mountKv('kv', 1);
  vault.putSecret('secret', 'apps/db', { password: DB_PASSWORD, port: 5432, options: { ssl: true } });
  vault.putSecret('kv', 'apps/db', { password: LEGACY_PASSWORD });
  vault.putSecret('secret', 'kube/prod', { kubeconfig: Buffer.from(KUBECONFIG).toString('base64'), plain: 'not base64!' });
  vault.addToken(ROOT_TOKEN, { paths: READ_ALL });
});

afterEach(async () => {
  await Promise.all(resolvers.splice(0).map((r) => r.close()));
  await vault.close();
  for (const token of vault.issuedTokens) everySecret.add(token);
});

afterAll(() => {
  const text = log.text();
  expect(text).toContain('resolved secret');
  expect(text).toContain('logged in to vault');
  expect(leakedSecrets(text, everySecret)).toEqual([]);
  log.remove();
  rmSync(work, { recursive: true, force: true });
});

function resolver(vaultConfig: Record<string, unknown>, env: Record<string, string> = {}): SecretResolver {
  const config = v.parse(SecretsConfigSchema, { vault: { enabled: true, url: vault.url, ...vaultConfig } });
  const created = createSecretResolver(config, { logger: log.logger, clock, cacheTtlMs: 0, env, tempDir: work });
  resolvers.push(created);
  return created;
}

const failure = (promise: Promise<unknown>) => secretFailure(promise, everySecret);

const v2Ref = 'encrypted:vault!e:secret!p:apps/db!k:password';
const v1Ref = 'encrypted:vault!e:kv!p:apps/db!k:password';
const logins = () => vault.requests.filter((r) => r.path.startsWith('/v1/auth/') && r.path.includes('/login')).length;
const preflights = () => vault.requests.filter((r) => r.path.startsWith('/v1/sys/internal/ui/mounts/')).length;

describe('vault engine with a configured token', () => {
  it('reads KV v2 and KV v1 keys, detecting each mount version once', async () => {
    const secrets = resolver({ authMethod: 'TOKEN', token: ROOT_TOKEN });
    expect(await secrets.resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(await secrets.resolve(v1Ref)).toBe(LEGACY_PASSWORD);
    expect(await secrets.resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(preflights()).toBe(2);
    expect(vault.requests.filter((r) => r.path === '/v1/secret/data/apps/db')).toHaveLength(2);
    expect(vault.requests.filter((r) => r.path === '/v1/kv/apps/db')).toHaveLength(1);
    expect(vault.requests.every((r) => r.path.includes('/login') || r.tokenSent)).toBe(true);
  });

  it('takes the token from VAULT_TOKEN when the file gives none', async () => {
    const secrets = resolver({ authMethod: 'token' }, { VAULT_TOKEN: ROOT_TOKEN });
    expect(await secrets.resolve(v2Ref)).toBe(DB_PASSWORD);
  });

  it('fails with unauthenticated when no token is configured at all', async () => {
    const error = await failure(resolver({}).resolve(v2Ref));
    expect(error.code).toBe('unauthenticated');
    expect(error.message).toBe(`cannot resolve secret ${v2Ref}: secrets.vault.authMethod is TOKEN but secrets.vault.token is not set and VAULT_TOKEN is empty`);
    expect(error.details).toEqual({ reference: v2Ref, engine: 'vault' });
  });

  it('uses the version a reference names without asking for the mount', async () => {
    const secrets = resolver({ token: ROOT_TOKEN });
    expect(await secrets.resolve('encrypted:vault!e:secret!p:apps/db!k:password!v:2')).toBe(DB_PASSWORD);
    expect(preflights()).toBe(0);
    // Vault checks the ACL before routing: the v1 path of a v2 secret is not what the policy grants.
    const wrongVersion = await failure(secrets.resolve('encrypted:vault!e:secret!p:apps/db!k:password!v:1'));
    expect(wrongVersion.code).toBe('forbidden');
  });

  it('falls back to KV v1 on a Vault without the mount preflight', async () => {
    await vault.close();
    vault = await startVaultDouble({ clock, withoutPreflight: true });
    vault.mountKv('kv', 1);
    vault.putSecret('kv', 'apps/db', { password: LEGACY_PASSWORD });
    vault.addToken(ROOT_TOKEN, { paths: READ_ALL });
    expect(await resolver({ token: ROOT_TOKEN }).resolve(v1Ref)).toBe(LEGACY_PASSWORD);
  });

  it('asks for an explicit version when the mount preflight is refused', async () => {
    vault.addToken('hvs.narrow', { paths: ['kv/apps/*'] });
    const error = await failure(resolver({ token: 'hvs.narrow' }).resolve(v2Ref));
    expect(error.code).toBe('forbidden');
    expect(error.message).toContain('cannot tell the KV version of mount secret (HTTP 403');
    expect(error.message).toContain('add !v:1 or !v:2 to the reference');
  });

  it('names the reference and the reason for a missing secret, a missing key, a deleted version and a refused path', async () => {
    const secrets = resolver({ token: ROOT_TOKEN });
    const missing = await failure(secrets.resolve('encrypted:vault!e:secret!p:apps/none!k:password'));
    expect(missing.code).toBe('not_found');
    expect(missing.message).toBe('cannot resolve secret encrypted:vault!e:secret!p:apps/none!k:password: Vault has no secret at secret/data/apps/none (KV v2)');

    const noKey = await failure(secrets.resolve('encrypted:vault!e:kv!p:apps/db!k:user'));
    expect(noKey.message).toBe('cannot resolve secret encrypted:vault!e:kv!p:apps/db!k:user: the secret at kv/apps/db has no key "user"');

    vault.deleteSecret('secret', 'apps/db');
    const deleted = await failure(secrets.resolve(v2Ref));
    expect(deleted.code).toBe('not_found');
    expect(deleted.message).toContain('the latest version of secret/data/apps/db is deleted');

    vault.putSecret('secret', 'other/x', { password: 'x' });
    const refused = await failure(secrets.resolve('encrypted:vault!e:secret!p:other/x!k:password'));
    expect(refused.code).toBe('forbidden');
    expect(refused.message).toBe('cannot resolve secret encrypted:vault!e:secret!p:other/x!k:password: Vault answered HTTP 403 for secret/data/other/x: permission denied');
  });

  it('returns non-string values as JSON text and decodes base64 values marked b:true', async () => {
    const secrets = resolver({ token: ROOT_TOKEN });
    expect(await secrets.resolve('encrypted:vault!e:secret!p:apps/db!k:port')).toBe('5432');
    expect(await secrets.resolve('encrypted:vault!e:secret!p:apps/db!k:options')).toBe('{"ssl":true}');
    expect(await secrets.resolve('encrypted:vault!e:secret!p:kube/prod!k:kubeconfig!b:true')).toBe(KUBECONFIG);
    const notBase64 = await failure(secrets.resolve('encrypted:vault!e:secret!p:kube/prod!k:plain!b:true'));
    expect(notBase64.code).toBe('invalid_input');
    expect(notBase64.message).toContain('not base64');
  });

  it('reports a sealed Vault and an unreachable one as unavailable', async () => {
    const secrets = resolver({ token: ROOT_TOKEN });
    vault.seal(true);
    const sealed = await failure(secrets.resolve('encrypted:vault!e:kv!p:apps/db!k:password!v:1'));
    expect(sealed.code).toBe('unavailable');
    expect(sealed.message).toContain('Vault is sealed');
    await vault.close();
    const down = await failure(secrets.resolve('encrypted:vault!e:kv!p:apps/db!k:password!v:1'));
    expect(down.code).toBe('unavailable');
    expect(down.message).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });

  it('sends the configured namespace on every request', async () => {
    await vault.close();
    vault = await startVaultDouble({ clock, namespace: 'team-a' });
    vault.mountKv('secret', 2);
    vault.putSecret('secret', 'apps/db', { password: DB_PASSWORD });
    vault.addToken(ROOT_TOKEN, { paths: READ_ALL });
    expect(await resolver({ token: ROOT_TOKEN, namespace: 'team-a' }).resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(vault.requests.every((r) => r.namespace === 'team-a')).toBe(true);
    const elsewhere = await failure(resolver({ token: ROOT_TOKEN }).resolve(v2Ref));
    expect(elsewhere.code).toBe('not_found');
    expect(elsewhere.message).toContain('no handler for route');
  });
});

describe('vault login methods', () => {
  it('logs in with the Kubernetes service account token and reads with the issued token', async () => {
    vault.addKubernetesRole('vendor-agent', { jwt: JWT, paths: READ_ALL });
    const secrets = resolver({ authMethod: 'KUBERNETES', role: 'vendor-agent', serviceAccountTokenFile: jwtFile });
    expect(await secrets.resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(await secrets.resolve(v1Ref)).toBe(LEGACY_PASSWORD);
    expect(logins()).toBe(1);
    expect(vault.requests[0]?.path).toBe('/v1/auth/kubernetes/login');
  });

  it('logs in at a custom auth mount', async () => {
    vault.addKubernetesRole('vendor-agent', { jwt: JWT, paths: READ_ALL }, 'k8s-prod');
    const secrets = resolver({ authMethod: 'kubernetes', role: 'vendor-agent', path: 'k8s-prod', serviceAccountTokenFile: jwtFile });
    expect(await secrets.resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(vault.requests[0]?.path).toBe('/v1/auth/k8s-prod/login');
  });

  it('reports a refused Kubernetes login with Vault\'s reason and without the token', async () => {
    vault.addKubernetesRole('vendor-agent', { jwt: 'another-jwt', paths: READ_ALL });
    const badJwt = await failure(resolver({ authMethod: 'KUBERNETES', role: 'vendor-agent', serviceAccountTokenFile: jwtFile }).resolve(v2Ref));
    expect(badJwt.code).toBe('unauthenticated');
    expect(badJwt.message).toBe(`cannot resolve secret ${v2Ref}: Vault KUBERNETES login at auth/kubernetes failed: HTTP 403 (permission denied)`);
    const badRole = await failure(resolver({ authMethod: 'KUBERNETES', role: 'nobody', serviceAccountTokenFile: jwtFile }).resolve(v2Ref));
    expect(badRole.message).toContain('HTTP 400 (invalid role name "nobody")');
    const noFile = await failure(resolver({ authMethod: 'KUBERNETES', role: 'x', serviceAccountTokenFile: join(work, 'absent') }).resolve(v2Ref));
    expect(noFile.code).toBe('invalid_input');
    expect(noFile.message).toContain(`secrets.vault.serviceAccountTokenFile ${join(work, 'absent')} cannot be read (ENOENT)`);
  });

  it('logs in with AppRole and refuses a wrong secret id', async () => {
    vault.addAppRole({ roleId: 'role-1', secretId: APPROLE_SECRET_ID, paths: READ_ALL });
    expect(await resolver({ authMethod: 'APPROLE', roleId: 'role-1', secretId: APPROLE_SECRET_ID }).resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(vault.requests[0]?.path).toBe('/v1/auth/approle/login');
    const wrong = await failure(resolver({ authMethod: 'APPROLE', roleId: 'role-1', secretId: 'wrong-secret-id' }).resolve(v2Ref));
    expect(wrong.code).toBe('unauthenticated');
    expect(wrong.message).toContain('HTTP 400 (invalid role or secret ID)');
  });

  it('logs in with a user name and password at userAuthPath', async () => {
    vault.addUserpass('agent', { password: USER_PASSWORD, paths: READ_ALL }, 'people');
    const secrets = resolver({ authMethod: 'USERPASS', username: 'agent', password: USER_PASSWORD, userAuthPath: 'people' });
    expect(await secrets.resolve(v1Ref)).toBe(LEGACY_PASSWORD);
    expect(vault.requests[0]?.path).toBe('/v1/auth/people/login/agent');
  });

  it('renews the token after two thirds of its lease and logs in again when renewal is refused', async () => {
    vault.addAppRole({ roleId: 'role-1', secretId: APPROLE_SECRET_ID, paths: READ_ALL, ttlSeconds: 60 });
    const secrets = resolver({ authMethod: 'APPROLE', roleId: 'role-1', secretId: APPROLE_SECRET_ID });
    await secrets.resolve(v1Ref);
    await clock.advance(39_000);
    await secrets.resolve(v1Ref);
    expect(vault.requests.filter((r) => r.path === '/v1/auth/token/renew-self')).toHaveLength(0);
    await clock.advance(2_000);
    await secrets.resolve(v1Ref);
    expect(vault.requests.filter((r) => r.path === '/v1/auth/token/renew-self')).toHaveLength(1);
    expect(logins()).toBe(1);
    // The renewed lease runs 60 s from the renewal; past it the token is gone and a login replaces it.
    await clock.advance(61_000);
    expect(await secrets.resolve(v1Ref)).toBe(LEGACY_PASSWORD);
    expect(logins()).toBe(2);
  });

  it('logs in again once when Vault refuses a revoked token, then reads', async () => {
    vault.addKubernetesRole('vendor-agent', { jwt: JWT, paths: READ_ALL });
    const secrets = resolver({ authMethod: 'KUBERNETES', role: 'vendor-agent', serviceAccountTokenFile: jwtFile });
    await secrets.resolve(v2Ref);
    vault.revokeAllTokens();
    expect(await secrets.resolve(v2Ref)).toBe(DB_PASSWORD);
    expect(logins()).toBe(2);
    // A path the role may not read is refused after the one fresh login, not retried forever.
    vault.putSecret('secret', 'other/x', { password: 'x' });
    const refused = await failure(secrets.resolve('encrypted:vault!e:secret!p:other/x!k:password'));
    expect(refused.code).toBe('forbidden');
    expect(logins()).toBe(3);
  });

  it('shares one login between concurrent reads', async () => {
    vault.addKubernetesRole('vendor-agent', { jwt: JWT, paths: READ_ALL });
    const secrets = resolver({ authMethod: 'KUBERNETES', role: 'vendor-agent', serviceAccountTokenFile: jwtFile });
    const values = await Promise.all([secrets.resolve(v2Ref), secrets.resolve(v1Ref), secrets.resolve('encrypted:vault!e:secret!p:apps/db!k:port')]);
    expect(values).toEqual([DB_PASSWORD, LEGACY_PASSWORD, '5432']);
    expect(logins()).toBe(1);
  });

  it('renews a configured token that Vault says is renewable', async () => {
    vault.addToken('hvs.periodic', { paths: READ_ALL, ttlSeconds: 30, renewable: true });
    const secrets = resolver({ token: 'hvs.periodic' });
    await secrets.resolve(v1Ref);
    expect(vault.requests[0]?.path).toBe('/v1/auth/token/lookup-self');
    await clock.advance(25_000);
    await secrets.resolve(v1Ref);
    await clock.advance(25_000);
    expect(await secrets.resolve(v1Ref)).toBe(LEGACY_PASSWORD);
    expect(vault.requests.filter((r) => r.path === '/v1/auth/token/renew-self')).toHaveLength(2);
  });
});

describe('vault over TLS', () => {
  it('trusts the CA in tls.caCertFile, refuses an unknown certificate, and skips verification only when told', async () => {
    const certificate = selfSignedCertificate();
    try {
      await vault.close();
      vault = await startVaultDouble({ clock, tls: { cert: certificate.cert, key: certificate.key } });
      vault.mountKv('kv', 1);
      vault.putSecret('kv', 'apps/db', { password: LEGACY_PASSWORD });
      vault.addToken(ROOT_TOKEN, { paths: READ_ALL });
      expect(vault.url.startsWith('https://')).toBe(true);

      expect(await resolver({ token: ROOT_TOKEN, tls: { caCertFile: certificate.certFile } }).resolve(v1Ref)).toBe(LEGACY_PASSWORD);
      const untrusted = await failure(resolver({ token: ROOT_TOKEN }).resolve(v1Ref));
      expect(untrusted.code).toBe('unavailable');
      expect(untrusted.message).toMatch(/cannot reach https:\/\/127\.0\.0\.1:\d+: [A-Z_]+/);
      expect(await resolver({ token: ROOT_TOKEN, tls: { insecureSkipVerify: true } }).resolve(v1Ref)).toBe(LEGACY_PASSWORD);
      const noCa = await failure(resolver({ token: ROOT_TOKEN, tls: { caCertFile: join(work, 'none.pem') } }).resolve(v1Ref));
      expect(noCa.message).toContain('secrets.vault.tls.caCertFile');
    } finally {
      certificate.remove();
    }
  });

  it('presents the client certificate in tls.clientCertFile and tls.clientKeyFile to a Vault that requires one', async () => {
    const server = selfSignedCertificate();
    const client = selfSignedCertificate();
    try {
      await vault.close();
      vault = await startVaultDouble({ clock, tls: { cert: server.cert, key: server.key, clientCa: client.cert } });
      vault.mountKv('kv', 1);
      vault.putSecret('kv', 'apps/db', { password: LEGACY_PASSWORD });
      vault.addToken(ROOT_TOKEN, { paths: READ_ALL });
      const tls = { caCertFile: server.certFile, clientCertFile: client.certFile, clientKeyFile: client.keyFile };
      expect(await resolver({ token: ROOT_TOKEN, tls }).resolve(v1Ref)).toBe(LEGACY_PASSWORD);
      const anonymous = await failure(resolver({ token: ROOT_TOKEN, tls: { caCertFile: server.certFile } }).resolve(v1Ref));
      expect(anonymous.code).toBe('unavailable');
    } finally {
      server.remove();
      client.remove();
    }
  });
});
