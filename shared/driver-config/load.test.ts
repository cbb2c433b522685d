import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { issuesOf } from '../../test/support/issues.ts';
import * as v from 'valibot';
import { parseDriverConfig, resolveDriverConfigPath } from './load.ts';
import { driverConfigSchemaWith } from './schema.ts';


describe('driver config', () => {
  it('reads the committed example', () => {
    const file = join(import.meta.dirname, '../../vendor-driver.example.yml');
    const config = parseDriverConfig(readFileSync(file, 'utf8'), file);
    expect(config.kubernetes.accounts.map((a) => a.name)).toEqual(['staging', 'production']);
    expect(config.kubernetes.accounts[0]).toMatchObject({ kubeconfigFile: '/etc/vendor/kubeconfigs/staging.yml', context: 'staging' });
  });

  it('accepts both kubeconfig spellings and keeps one', () => {
    const config = parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n      kubeConfigFile: /k\n', 'f.yml');
    expect(config.kubernetes.accounts[0]).toEqual({ name: 'a', kubeconfigFile: '/k' });
  });

  it('treats an empty file as no accounts', () => {
    expect(parseDriverConfig('', 'f.yml')).toEqual({ kubernetes: { accounts: [] }, api: { auth: { accountManagerRoles: [] } } });
  });

  it('names every bad key path', () => {
    const text = [
      'kubernetes:',
      '  accounts:',
      '    - name: ok',
      '    - name: "bad name"',
      '      kinds: deployment',
      '      kubeconfigFile: "apiVersion: v1\\nclusters: []"',
      '    - name: p',
      '      permissions:',
      '        - READ: ["role with space", ""]',
      '      surprise: true',
      'extra: 1',
    ].join('\n');
    const paths = issuesOf(() => parseDriverConfig(text, 'f.yml')).map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'kubernetes.accounts[1].name',
        'kubernetes.accounts[1].kinds',
        'kubernetes.accounts[1].kubeconfigFile',
        'kubernetes.accounts[2].permissions[0].READ[1]',
        'kubernetes.accounts[2].surprise',
        'extra',
      ]),
    );
  });

  it('loads role names with whitespace (docs/agent-config.md#permissions: the permissions are then not applied)', () => {
    const config = parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n      permissions:\n        - READ: ["release team"]\n', 'f.yml');
    expect(config.kubernetes.accounts[0]?.permissions).toEqual([{ READ: ['release team'] }]);
  });

  it('loads clusterScopedKinds, and refuses a malformed kind or Namespace in it', () => {
    const config = parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n      namespaces: [shop]\n      clusterScopedKinds: [ClusterRole.rbac.authorization.k8s.io, PersistentVolume]\n', 'f.yml');
    expect(config.kubernetes.accounts[0]?.clusterScopedKinds).toEqual(['ClusterRole.rbac.authorization.k8s.io', 'PersistentVolume']);
    expect(issuesOf(() => parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n      clusterScopedKinds: [Namespace, "cluster role", ClusterRole.RBAC]\n', 'f.yml'))).toEqual([
      { path: 'kubernetes.accounts[0].clusterScopedKinds[0]', message: 'must not be Namespace: Namespace objects are allowed by namespaces' },
      { path: 'kubernetes.accounts[0].clusterScopedKinds[1]', message: 'must be Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io)' },
      { path: 'kubernetes.accounts[0].clusterScopedKinds[2]', message: 'must be Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io)' },
    ]);
  });

  it('refuses namespace names, CRD groups and account names the agent refuses too (docs/agent-config.md#one-rule-for-every-definition)', () => {
    const text = 'kubernetes:\n  accounts:\n    - name: a\n      namespaces: [Shop]\n      customResourceDefinitions: [{kind: Rollout.io}]\n    - name: "-b"\n';
    expect(issuesOf(() => parseDriverConfig(text, 'f.yml'))).toEqual([
      { path: 'kubernetes.accounts[0].namespaces[0]', message: 'must be a namespace name (lower-case letters, digits and -, at most 63)' },
      { path: 'kubernetes.accounts[0].customResourceDefinitions[0].kind', message: 'must have the form Kind.group, the group with a dot (for example Rollout.argoproj.io)' },
      { path: 'kubernetes.accounts[1].name', message: 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit' },
    ]);
  });

  it('refuses maxResumableResourceAgeMs 0 instead of reading it as the default', () => {
    expect(issuesOf(() => parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n      maxResumableResourceAgeMs: 0\n', 'f.yml'))).toEqual([
      { path: 'kubernetes.accounts[0].maxResumableResourceAgeMs', message: 'must be at least 1 (milliseconds); leave the key out for the default, 300000' },
    ]);
    const config = parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n      maxResumableResourceAgeMs: 1\n', 'f.yml');
    expect(config.kubernetes.accounts[0]?.maxResumableResourceAgeMs).toBe(1);
  });

  it('refuses duplicate names, bad YAML, and both spellings at once', () => {
    expect(issuesOf(() => parseDriverConfig('kubernetes:\n  accounts:\n    - name: a\n    - name: a\n', 'f.yml'))).toEqual([
      { path: 'kubernetes.accounts[1].name', message: 'duplicate name "a" (first at kubernetes.accounts[0])' },
    ]);
    expect(() => parseDriverConfig('kubernetes: [', 'f.yml')).toThrow(/not valid YAML/);
    // The YAML error names the position but never quotes the file: it may hold the admin token.
    const secret = 'x'.repeat(20) + 'SECRET';
    expect(() => parseDriverConfig(`api:\n  auth:\n    adminToken: "${secret}\n  x: [`, 'f.yml')).toThrow(/not valid YAML: .*line \d+, column \d+$/);
    expect(() => parseDriverConfig(`api:\n  auth:\n    adminToken: "${secret}\n  x: [`, 'f.yml')).not.toThrow(/SECRET/);
    // YAML that parses but cannot be read as data: an alias to no anchor (named after the secret here), too many aliases.
    expect(issuesOf(() => parseDriverConfig(`api:\n  auth:\n    adminToken: *${secret}\n`, 'f.yml'))).toEqual([{ path: '(yaml)', message: 'an alias names no anchor set before it' }]);
    expect(() => parseDriverConfig(`api:\n  auth:\n    adminToken: *${secret}\n`, 'f.yml')).not.toThrow(/SECRET/);
    const bomb = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]', ...[1, 2, 3, 4].map((i) => `a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`)].join('\n');
    expect(() => parseDriverConfig(bomb, 'f.yml')).toThrow('f.yml is not valid YAML: its aliases expand to more than 100 nodes');
    expect(issuesOf(() => parseDriverConfig('kubernetes:\n  accounts:\n    - {name: a, kubeconfigFile: /a, kubeConfigFile: /b}\n', 'f.yml'))).toEqual([
      { path: 'kubernetes.accounts[0].kubeConfigFile', message: 'give kubeconfigFile or kubeConfigFile, not both' },
    ]);
  });

  it('composes with further sections', () => {
    const schema = driverConfigSchemaWith({ grpc: v.optional(v.strictObject({ port: v.number() })) });
    expect(parseDriverConfig('grpc:\n  port: 9091\n', 'f.yml', schema)).toMatchObject({ kubernetes: { accounts: [] }, grpc: { port: 9091 } });
  });

  it('resolves the file from the env var, the local file, or the example', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    expect(resolveDriverConfigPath({}, dir)).toBe(join(dir, 'vendor-driver.example.yml'));
    writeFileSync(join(dir, 'vendor-driver.yml'), '');
    expect(resolveDriverConfigPath({}, dir)).toBe(join(dir, 'vendor-driver.yml'));
    expect(resolveDriverConfigPath({ VENDOR_DRIVER_CONFIG: 'other.yml' }, dir)).toBe(join(dir, 'other.yml'));
  });
});
