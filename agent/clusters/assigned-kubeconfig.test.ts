import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVendorError } from '../../shared/errors.ts';
import { parseSecretReference } from '../../shared/secrets/reference.ts';
import { loadClusterConfig } from './kubeconfig.ts';
import { allowedCommand, assertReferenceAllowed, checkKubeconfigDocument, readAllowedKubeconfig, secretLocation, type KubeconfigPolicy } from './assigned-kubeconfig.ts';

let base: string;
let allowed: string;
let outside: string;
let bin: string;
let policy: KubeconfigPolicy;

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isVendorError(e)) return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
}

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'assigned-kubeconfig-'));
  allowed = join(base, 'allowed');
  outside = join(base, 'outside');
  bin = join(base, 'bin');
  for (const d of [allowed, outside, bin]) mkdirSync(d);
  for (const f of ['ca.crt', 'client.key', 'token']) writeFileSync(join(allowed, f), 'x');
  writeFileSync(join(outside, 'token'), 'x');
  writeFileSync(join(bin, 'plugin'), '#!/bin/sh\n');
  chmodSync(join(bin, 'plugin'), 0o755);
  // A second name for the same program, as multi-call binaries have.
  symlinkSync(join(bin, 'plugin'), join(bin, 'other-name'));
  policy = { kubeconfigDirs: [allowed], execCommands: [join(bin, 'other-name')], secretReferences: [{ engine: 'secrets-manager', path: 'eu-west-1/kube/*' }] };
});

afterAll(() => rmSync(base, { recursive: true, force: true }));

const env = { PATH: '/usr/bin:/bin' };
const user = (u: Record<string, unknown>) => ({ users: [{ name: 'u', user: u }] });

describe('what an assigned kubeconfig may read and run', () => {
  it('every file it names must be in an allowed folder; token files only as absolute paths', async () => {
    await expect(checkKubeconfigDocument({ clusters: [{ name: 'c', cluster: { 'certificate-authority': 'ca.crt' } }], ...user({ 'client-key': join(allowed, 'client.key') }) }, allowed, policy, env)).resolves.toBeDefined();
    expect(await refusal(checkKubeconfigDocument(user({ 'client-key': '../outside/token' }), allowed, policy, env))).toMatch(/^client-key of user u .*\/allowed\/\.\.\/outside\/token is not in kubernetes\.assignedAccounts\.kubeconfigDirs/);
    expect(await refusal(checkKubeconfigDocument(user({ 'token-file': 'token' }), allowed, policy, env))).toBe('token-file of user u must be an absolute path for an assigned account');
    expect(await refusal(checkKubeconfigDocument(user({ 'auth-provider': { name: 'oidc', config: { 'idp-certificate-authority': join(outside, 'token') } } }), allowed, policy, env))).toMatch(/^auth-provider idp-certificate-authority of user u/);
  });

  it('a command runs only as the listed executable; other providers may not run commands', async () => {
    // The plugin is listed under another name: that name is what runs.
    expect(await allowedCommand(join(bin, 'plugin'), allowed, policy, env, 'exec')).toBe(join(bin, 'other-name'));
    expect(await refusal(allowedCommand('sh', allowed, policy, env, 'exec command'))).toBe('exec command sh is not in kubernetes.assignedAccounts.execCommands');
    expect(await refusal(allowedCommand('no-such-command-anywhere', allowed, policy, env, 'exec command'))).toMatch(/\(not found\)$/);
    const gcp = await checkKubeconfigDocument(user({ 'auth-provider': { name: 'gcp', config: { 'cmd-path': join(bin, 'plugin') } } }), allowed, policy, env);
    expect(gcp.get(join(bin, 'plugin'))).toBe(join(bin, 'other-name'));
    expect(await refusal(checkKubeconfigDocument(user({ 'auth-provider': { name: 'azure', config: { 'cmd-path': join(bin, 'plugin') } } }), allowed, policy, env))).toMatch(/only the gcp provider may/);
    expect(await refusal(checkKubeconfigDocument(user({ exec: { command: join(bin, 'plugin'), env: [{ name: 'NODE_OPTIONS', value: '--require /x' }] } }), allowed, policy, env))).toMatch(/sets NODE_OPTIONS/);
  });

  it('a kubeconfig is read only as a regular file in an allowed folder', async () => {
    writeFileSync(join(allowed, 'k'), 'apiVersion: v1');
    await expect(readAllowedKubeconfig(join(allowed, 'k'), policy)).resolves.toMatchObject({ text: 'apiVersion: v1' });
    expect(await refusal(readAllowedKubeconfig(allowed, policy))).toMatch(/is not a regular file$/);
    expect(await refusal(readAllowedKubeconfig(`${allowed}/../outside/token`, policy))).toMatch(/is not in kubernetes\.assignedAccounts\.kubeconfigDirs \(it resolves to /);
  });

  it('secret references match by engine and location', () => {
    const ref = (text: string) => parseSecretReference(text)!;
    expect(secretLocation(ref('encrypted:vault!e:/secret/!p:kube/prod!k:x'))).toBe('secret/kube/prod');
    expect(() => assertReferenceAllowed(ref('encryptedFile:secrets-manager!r:eu-west-1!s:kube/prod'), policy)).not.toThrow();
    expect(() => assertReferenceAllowed(ref('encryptedFile:secrets-manager!r:us-east-1!s:kube/prod'), policy)).toThrow(/secret secrets-manager us-east-1\/kube\/prod is not in kubernetes\.assignedAccounts\.secretReferences/);
    expect(() => assertReferenceAllowed(ref('encryptedFile:vault!e:eu-west-1!p:kube/prod!k:x'), policy)).toThrow(/is not in/);
    // An s3 object is located by region, bucket and key, so a pattern cannot be met by another bucket.
    expect(secretLocation(ref('encryptedFile:s3!r:eu-west-1!b:kube-configs!f:prod/kubeconfig'))).toBe('eu-west-1/kube-configs/prod/kubeconfig');
    const s3Policy = { ...policy, secretReferences: [{ engine: 's3' as const, path: 'eu-west-1/kube-configs/*' }] };
    expect(() => assertReferenceAllowed(ref('encryptedFile:s3!r:eu-west-1!b:kube-configs!f:prod/kubeconfig'), s3Policy)).not.toThrow();
    expect(() => assertReferenceAllowed(ref('encryptedFile:s3!r:eu-west-1!b:other-bucket!f:kube-configs/x'), s3Policy)).toThrow(/secret s3 eu-west-1\/other-bucket\/kube-configs\/x is not in/);
  });

  it('an assignment whose reference is kubeconfig contents is refused before anything is resolved, and the contents are never in the message', async () => {
    const canary = 'canary-token-5f0c2e9a';
    const resolved: string[] = [];
    const message = await refusal(
      loadClusterConfig(
        { account: 'a', kubeConfigFile: `{"apiVersion":"v1","users":[{"name":"u","user":{"token":"${canary}"}}]}`, context: '', serviceAccount: false, insecure: false, noProxy: false, oAuthScopes: [], policy },
        { secrets: { resolveFile: async (v: string) => (resolved.push(v), v) }, kubernetesNoProxy: false },
      ),
    );
    expect(message).toBe('account a: the kubeconfig reference is refused: must be a file path or a secret reference, not kubeconfig contents');
    expect(resolved).toEqual([]);
  });
});

