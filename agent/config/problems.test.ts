import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DEFAULT_CONFIG_PATHS, loadConfigFile, parseConfig, resolveConfigPath } from './load.ts';
import { formatReport } from '../../shared/config-report/report.ts';

function problems(raw: unknown): Record<string, string> {
  const result = parseConfig(typeof raw === 'string' ? raw : stringify(raw), 'test.yml');
  expect(result.config).toBeUndefined();
  return Object.fromEntries(result.problems.map((p) => [p.path, p.value === undefined ? p.message : `${p.message}, got ${p.value}`]));
}

function warnings(raw: unknown): Record<string, string> {
  const result = parseConfig(stringify(raw), 'test.yml');
  return Object.fromEntries(result.warnings.map((w) => [w.path, w.message]));
}

const ok = { name: 'ok', serviceAccount: true };

describe('problems in vendor-agent.yml', () => {
  it('names the key path, the bad value and what is allowed', () => {
    const found = problems({
      kubernetes: {
        accounts: [ok, { name: 'b', kubeConfigFile: '/k' }, { name: 'c', serviceAccount: true, permissions: [{ READ: ['dev', ''] }] }],
      },
    });
    expect(found).toEqual({ 'kubernetes.accounts[2].permissions[0].READ[1]': 'expected a non-empty role name, got ""' });
  });

  it('lists every problem of the file at once', () => {
    const found = problems({
      driver: { grpc: 'no-port', keepAliveTimeOutSeconds: 0, responseRetries: { maxRetries: -1 } },
      kubernetes: { reconnectTimeoutMs: 'soon', retries: { retryableErrors: 'timeout' }, accounts: [{ name: 'a b', serviceAccount: 'yes' }] },
      timeoutSeconds: 1.5,
      tasks: { queueCheckFrequencyMs: 0 },
      logging: { format: 'xml', level: 'verbose', file: '' },
      pprof: { enabled: 'on', port: 70000 },
      prometheus: { port: -1 },
      server: { host: '', port: '8082' },
    });
    expect(found).toEqual({
      'driver.grpc': 'expected host:port (for example spin-clouddriver-grpc:9091), got "no-port"',
      'driver.keepAliveTimeOutSeconds': 'expected an integer >= 1, got 0',
      'driver.responseRetries.maxRetries': 'expected an integer >= 0, got -1',
      'kubernetes.reconnectTimeoutMs': 'expected an integer >= 0, got "soon"',
      'kubernetes.retries.retryableErrors': 'expected a list, got "timeout"',
      'kubernetes.accounts[0].name': 'expected an account name: letters, digits, ".", "_" or "-", starting and ending with a letter or digit, at most 253 characters, got "a b"',
      'kubernetes.accounts[0].serviceAccount': 'expected true or false, got "yes"',
      timeoutSeconds: 'expected an integer >= 0, got 1.5',
      'tasks.queueCheckFrequencyMs': 'expected an integer >= 1, got 0',
      'logging.format': 'expected text or json, got "xml"',
      'logging.level': 'expected one of panic, fatal, error, warn, warning, info, debug, trace (any case), got "verbose"',
      'logging.file': 'expected a file path, stdout or stderr, got ""',
      'pprof.enabled': 'expected true or false, got "on"',
      'pprof.port': 'expected an integer from 0 to 65535, got 70000',
      'prometheus.port': 'expected an integer from 0 to 65535, got -1',
      'server.host': 'expected a host name or address, got ""',
      'server.port': 'expected an integer from 0 to 65535, got "8082"',
    });
  });

  it('reports YAML syntax errors with their line and column', () => {
    const result = parseConfig('kubernetes:\n  accounts: [\n    - name: a\n', 'broken.yml');
    expect(result.config).toBeUndefined();
    expect(result.problems.length).toBeGreaterThan(0);
    expect(result.problems[0]!.path).toMatch(/^line \d+, column \d+$/);
    expect(result.problems[0]!.message).toMatch(/^expected valid YAML: /);
  });

  it('refuses a duplicated key in a mapping', () => {
    const result = parseConfig('server:\n  port: 1\n  port: 2\n', 'dup.yml');
    expect(result.problems.map((p) => p.path)).toEqual(['line 3, column 3']);
  });

  it('refuses lists and scalars where a mapping is expected', () => {
    expect(problems('- a\n- b\n')).toEqual({ '(top of the file)': 'expected a mapping of keys to values at the top of the file, got a list of 2' });
    expect(problems({ driver: ['a'], logging: 'debug', kubernetes: { accounts: [ok, 'prod'] } })).toEqual({
      driver: 'expected a mapping of keys to values, got a list of 1',
      logging: 'expected a mapping of keys to values, got "debug"',
      'kubernetes.accounts[1]': 'expected a mapping with at least a name, got "prod"',
    });
  });

  it('checks the rules between keys of an account', () => {
    expect(
      problems({
        kubernetes: {
          accounts: [
            { name: 'both-spellings', kubeConfigFile: '/a', kubeconfigFile: '/b' },
            { name: 'neither', context: 'x' },
            { name: 'both-modes', serviceAccount: true, kubeConfigFile: '/a' },
            { name: 'both-spellings', serviceAccount: true },
          ],
        },
      }),
    ).toEqual({
      'kubernetes.accounts[0].kubeconfigFile': 'expected only one of kubeConfigFile and kubeconfigFile (they are the same key), got "/b"',
      'kubernetes.accounts[1].serviceAccount': 'expected either serviceAccount: true or a kubeConfigFile, and not both, got false',
      'kubernetes.accounts[2].serviceAccount': 'expected either serviceAccount: true or a kubeConfigFile, and not both, got true',
      'kubernetes.accounts[3].name': 'expected a name not used by an earlier account, got "both-spellings"',
    });
  });

  it('refuses the account names the driver would leave out of a hello', () => {
    const names = ['-lead', 'trail.', 'a b', 'x/y', 'é', 'n'.repeat(254)];
    const found = problems({ kubernetes: { accounts: names.map((name) => ({ name, serviceAccount: true })) } });
    expect(Object.keys(found)).toEqual(names.map((_, i) => `kubernetes.accounts[${i}].name`));
    const valid = parseConfig(stringify({ kubernetes: { accounts: [{ name: 'a.b_c-9', serviceAccount: true }, { name: 'n'.repeat(253), serviceAccount: true }] } }), 'test.yml');
    expect(valid.problems).toEqual([]);
  });

  it('refuses more accounts than one agent defines, which the driver would refuse at hello', () => {
    const accounts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `a-${i}`, serviceAccount: true }));
    expect(parseConfig(stringify({ kubernetes: { accounts: accounts(1000) } }), 'test.yml').problems).toEqual([]);
    expect(problems({ kubernetes: { accounts: accounts(1001) } })).toEqual({
      'kubernetes.accounts': 'expected at most 1000 accounts: one agent defines no more (docs/agent-config.md#per-account-kubernetesaccounts), got a list of 1001',
    });
  });

  it('takes onlyNamespacedResources without namespaces, as the driver does: namespaced kinds of every namespace', () => {
    const result = parseConfig(stringify({ kubernetes: { accounts: [{ name: 'all-namespaces', serviceAccount: true, onlyNamespacedResources: true }] } }), 'test.yml');
    expect(result.problems).toEqual([]);
    expect(result.config?.kubernetes.accounts[0]).toMatchObject({ onlyNamespacedResources: true, namespaces: [] });
  });

  it('checks namespaces, kinds and custom resource definitions', () => {
    expect(
      problems(
        {
          kubernetes: {
            accounts: [
              {
                ...ok,
                namespaces: ['Default', 'ok-ns'],
                omitNamespaces: ['x_y', ''],
                kinds: ['replica set', ''],
                customResourceDefinitions: [{ kind: 'Rollout' }, { kind: 'Rollout.argoproj.io', scope: 'cluster' }, { scope: 'Cluster' }],
                clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io', 'cluster role', 'Namespace', 'ClusterRole.RBAC'],
              },
            ],
          },
        },
      ),
    ).toEqual({
      'kubernetes.accounts[0].namespaces[0]': 'expected a namespace name (lower-case letters, digits and -, at most 63), got "Default"',
      'kubernetes.accounts[0].omitNamespaces[1]': 'expected a non-empty namespace name, got ""',
      'kubernetes.accounts[0].kinds[1]': 'expected a non-empty kind name, got ""',
      'kubernetes.accounts[0].customResourceDefinitions[0].kind': 'expected Kind.group (for example Rollout.argoproj.io), got "Rollout"',
      'kubernetes.accounts[0].customResourceDefinitions[1].scope': 'expected Namespaced or Cluster, got "cluster"',
      'kubernetes.accounts[0].customResourceDefinitions[2].kind': 'expected this key, it is required, got nothing',
      'kubernetes.accounts[0].clusterScopedKinds[1]': 'expected Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io), got "cluster role"',
      'kubernetes.accounts[0].clusterScopedKinds[2]': 'expected a kind other than Namespace: Namespace objects are allowed by namespaces, got "Namespace"',
      'kubernetes.accounts[0].clusterScopedKinds[3]': 'expected Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io), got "ClusterRole.RBAC"',
    });
  });

  it('checks the permissions format of docs/agent-config.md#permissions', () => {
    expect(
      problems({ kubernetes: { accounts: [{ ...ok, permissions: [{ Read: ['dev'] }, {}, { WRITE: 'ops' }, 'READ'] }] } }),
    ).toEqual({
      'kubernetes.accounts[0].permissions[0].Read': 'expected READ or WRITE as the permission type, got key Read',
      'kubernetes.accounts[0].permissions[1]': 'expected a READ or WRITE key with a list of role names, got an empty mapping',
      'kubernetes.accounts[0].permissions[2].WRITE': 'expected a list of role names, got "ops"',
      'kubernetes.accounts[0].permissions[3]': 'expected a mapping with a READ or WRITE key and a list of role names, got "READ"',
    });
  });

  it('checks the driver connection keys against each other', () => {
    expect(
      problems({
        driver: {
          grpc: 'driver:99999',
          auth: { token: 'abc', tokenCommand: { command: 'get-token', format: 'yaml' } },
          tls: { clientKeyFile: '/k.pem' },
        },
      }),
    ).toEqual({
      'driver.grpc': 'expected host:port with a port from 1 to 65535, got "driver:99999"',
      'driver.auth.tokenCommand.format': 'expected one of raw, json or an empty string, got "yaml"',
      'driver.tls.clientCertFile': 'expected a clientCertFile when clientKeyFile is given, got nothing',
    });
    expect(problems({ driver: { auth: { token: 'abc', tokenCommand: { command: 'get-token' } } } })).toEqual({
      'driver.auth.tokenCommand': 'expected token or tokenCommand, not both, got a mapping with command, args, format, refreshIntervalSeconds',
    });
    expect(problems({ driver: { auth: { tokenCommand: { args: ['x'] } } } })).toEqual({
      'driver.auth.tokenCommand.command': 'expected this key, it is required, got nothing',
    });
  });

  it('checks the TLS keys of the health server', () => {
    expect(problems({ server: { ssl: { enabled: true, clientAuth: 'need', keyPassword: 'a', keyFilePassword: 'b' } } })).toEqual({
      'server.ssl.certFile': 'expected a certFile when enabled is true, got nothing',
      'server.ssl.keyFile': 'expected a keyFile when enabled is true, got nothing',
      'server.ssl.caCertFile': 'expected a caCertFile when clientAuth is want or need, got nothing',
      'server.ssl.keyFilePassword': 'expected keyPassword and keyFilePassword to be equal when both are given, got a string (value hidden)',
    });
    expect(problems({ server: { ssl: { clientAuth: 'required' } } })).toEqual({
      'server.ssl.clientAuth': 'expected none, want or need, got "required"',
    });
  });

  it('never prints the value of a secret-bearing key', () => {
    const text = stringify({
      driver: { auth: { token: 12345678, tokenCommand: { command: 'x', args: ['--password', 99887766] } }, tls: { clientKeyFilePassword: ['hunter2'] } },
      server: { ssl: { keyPassword: 55554444, keyFilePassword: 'zz-secret' } },
      secrets: { vault: 'top-secret-value' },
    });
    const result = parseConfig(text, 'secrets.yml');
    const report = formatReport(result);
    for (const secret of ['12345678', '99887766', 'hunter2', '55554444', 'zz-secret', 'top-secret-value']) {
      expect(report).not.toContain(secret);
    }
    expect(report).toContain('driver.auth.token: expected a string, got a number (value hidden)');
    expect(report).toContain('secrets.vault: expected a mapping of keys to values, got a string (value hidden)');
  });
});

describe('secrets.vault in vendor-agent.yml', () => {
  const vault = (keys: Record<string, unknown>) => ({ secrets: { vault: keys } });

  it('checks every vault key and names it by its key path', () => {
    expect(
      problems(
        vault({
          enabled: 'yes',
          url: 'vault:8200',
          authMethod: 'LDAP',
          role: '',
          namespace: 7,
          serviceAccountTokenFile: '',
          timeoutMs: 0,
          tls: { insecureSkipVerify: 'no', serverName: 'vault internal', clientKeyFile: '' },
        }),
      ),
    ).toEqual({
      'secrets.vault.enabled': 'expected true or false, got "yes"',
      'secrets.vault.url': 'expected an http or https URL such as https://vault.example:8200, got "vault:8200"',
      'secrets.vault.authMethod': 'expected one of TOKEN, KUBERNETES, APPROLE, USERPASS (any case), got "LDAP"',
      'secrets.vault.role': 'expected a non-empty string, got ""',
      'secrets.vault.namespace': 'expected a non-empty string, got 7',
      'secrets.vault.serviceAccountTokenFile': 'expected a file path, got ""',
      'secrets.vault.timeoutMs': 'expected an integer >= 1, got 0',
      'secrets.vault.tls.insecureSkipVerify': 'expected true or false, got "no"',
      'secrets.vault.tls.serverName': 'expected a server name without spaces, got "vault internal"',
      'secrets.vault.tls.clientKeyFile': 'expected a file path, got ""',
    });
  });

  it('refuses lists and scalars where the vault mappings belong', () => {
    expect(problems({ secrets: { vault: [{ enabled: true }] } })).toEqual({
      'secrets.vault': 'expected a mapping of keys to values, got a list of 1 (value hidden)',
    });
    expect(problems(vault({ tls: 'on' }))).toEqual({ 'secrets.vault.tls': 'expected a mapping of keys to values, got "on"' });
    expect(problems({ secrets: ['vault'] })).toEqual({ secrets: 'expected a mapping of keys to values, got a list of 1 (value hidden)' });
  });

  it('when enabled, requires the url and the credentials of the chosen auth method', () => {
    expect(problems(vault({ enabled: true }))).toEqual({ 'secrets.vault.url': 'expected a url when enabled is true, got nothing' });
    expect(problems(vault({ enabled: true, url: 'https://vault:8200', authMethod: 'kubernetes' }))).toEqual({
      'secrets.vault.role': 'expected a role when authMethod is KUBERNETES, got nothing',
    });
    expect(problems(vault({ enabled: true, url: 'https://vault:8200', authMethod: 'AppRole' }))).toEqual({
      'secrets.vault.roleId': 'expected a roleId when authMethod is APPROLE, got nothing',
      'secrets.vault.secretId': 'expected a secretId when authMethod is APPROLE, got nothing',
    });
    expect(problems(vault({ enabled: true, url: 'https://vault:8200', authMethod: 'USERPASS', password: 'pw' }))).toEqual({
      'secrets.vault.username': 'expected a username when authMethod is USERPASS, got nothing',
    });
    // Disabled, nothing is required: the section may be kept ready in the file.
    expect(parseConfig(stringify(vault({ authMethod: 'APPROLE' })), 't.yml').problems).toEqual([]);
    expect(parseConfig(stringify(vault({ enabled: true, url: 'https://vault:8200' })), 't.yml').problems).toEqual([]);
  });

  it('reports a missing credential together with the other problems of the section', () => {
    expect(problems(vault({ enabled: true, authMethod: 'KUBERNETES', timeoutMs: -5, tls: { caCertFile: '' } }))).toEqual({
      'secrets.vault.timeoutMs': 'expected an integer >= 1, got -5',
      'secrets.vault.tls.caCertFile': 'expected a file path, got ""',
      'secrets.vault.url': 'expected a url when enabled is true, got nothing',
      'secrets.vault.role': 'expected a role when authMethod is KUBERNETES, got nothing',
    });
  });

  it('never prints the vault credentials, and prints the other vault values', () => {
    const text = stringify(vault({ enabled: true, url: 'vault:8200', authMethod: 'USERPASS', token: 31415926, secretId: ['s3cr3t-id'], password: 27182818 }));
    const report = formatReport(parseConfig(text, 'vault.yml'));
    for (const secret of ['31415926', 's3cr3t-id', '27182818']) expect(report).not.toContain(secret);
    expect(report).toContain('secrets.vault.token: expected a non-empty string, got a number (value hidden)');
    expect(report).toContain('secrets.vault.secretId: expected a non-empty string, got a list of 1 (value hidden)');
    expect(report).toContain('secrets.vault.password: expected a non-empty string, got a number (value hidden)');
    expect(report).toContain('secrets.vault.username: expected a username when authMethod is USERPASS, got nothing');
    expect(report).toContain('secrets.vault.url: expected an http or https URL such as https://vault.example:8200, got "vault:8200"');
  });

  it('the parsed configuration carries the vault settings with every default', () => {
    const result = parseConfig(stringify(vault({ enabled: true, url: 'https://vault:8200', authMethod: 'approle', roleId: 'r', secretId: 's' })), 't.yml');
    expect(result.problems).toEqual([]);
    expect(result.config?.secrets).toEqual({
      vault: {
        enabled: true,
        url: 'https://vault:8200',
        authMethod: 'APPROLE',
        roleId: 'r',
        secretId: 's',
        serviceAccountTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
        timeoutMs: 10000,
        tls: { insecureSkipVerify: false },
      },
    });
  });
});

describe('warnings', () => {
  it('names an unknown key and the closest known key', () => {
    expect(
      warnings({
        kubernets: {},
        driver: { grcp: 'x:1', tls: { cacertfile: '/ca' } },
        kubernetes: { acounts: [], accounts: [{ ...ok, kubeconfigfile: '/k', namspaces: ['a'] }] },
        logging: { levle: 'debug' },
      }),
    ).toEqual({
      kubernets: 'unknown key, ignored; the closest known key is kubernetes',
      'driver.grcp': 'unknown key, ignored; the closest known key is driver.grpc',
      'driver.tls.cacertfile': 'unknown key, ignored; the closest known key is driver.tls.cacertFile',
      'kubernetes.acounts': 'unknown key, ignored; the closest known key is kubernetes.accounts',
      'kubernetes.accounts[0].kubeconfigfile': 'unknown key, ignored; the closest known key is kubernetes.accounts[0].kubeconfigFile',
      'kubernetes.accounts[0].namspaces': 'unknown key, ignored; the closest known key is kubernetes.accounts[0].namespaces',
      'logging.levle': 'unknown key, ignored; the closest known key is logging.level',
    });
  });

  it('names unknown keys under secrets.vault and its tls with the closest known key', () => {
    expect(
      warnings({ secrets: { vualt: {}, vault: { url: 'http://vault:8200', authmethod: 'token', secretID: 'x', tls: { caCert: '/ca.pem' } } } }),
    ).toEqual({
      'secrets.vualt': 'unknown key, ignored; the closest known key is secrets.vault',
      'secrets.vault.authmethod': 'unknown key, ignored; the closest known key is secrets.vault.authMethod',
      'secrets.vault.secretID': 'unknown key, ignored; the closest known key is secrets.vault.secretId',
      'secrets.vault.tls.caCert': 'unknown key, ignored; the closest known key is secrets.vault.tls.caCertFile',
    });
  });

  it('accepts omitNamespaces and onlySpinnakerManaged without a warning: the cache applies them', () => {
    const raw = { kubernetes: { accounts: [{ ...ok, omitNamespaces: ['kube-system'], onlySpinnakerManaged: true }] } };
    expect(warnings(raw)).toEqual({});
    expect(parseConfig(stringify(raw), 't.yml').problems).toEqual([]);
  });

  it('refuses maxResumableResourceAgeMs 0 instead of reading it as the default', () => {
    expect(problems({ kubernetes: { accounts: [{ ...ok, maxResumableResourceAgeMs: 0 }] } })).toEqual({
      'kubernetes.accounts[0].maxResumableResourceAgeMs': 'expected an integer >= 1 (milliseconds); leave the key out for the default, 300000, got 0',
    });
  });

  it('role names with whitespace: permissions not applied, everyone has access, loudly', () => {
    const raw = {
      kubernetes: {
        accounts: [
          { name: 'prod', serviceAccount: true, permissions: [{ READ: ['dev'] }, { WRITE: ['ops', 'release team'] }] },
          { name: 'dev', kubeConfigFile: '/k', permissions: [{ READ: ['dev'] }] },
        ],
      },
    };
    const result = parseConfig(stringify(raw), 't.yml');
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual([
      {
        path: 'kubernetes.accounts[0].permissions[1].WRITE[1]',
        message: 'role name "release team" contains whitespace: PERMISSIONS OF ACCOUNT prod ARE NOT APPLIED and every user has access to it',
      },
    ]);
    const [prod, dev] = result.config!.kubernetes.accounts;
    expect(prod).toMatchObject({ permissionsIgnored: true, permissions: { READ: [], WRITE: [] } });
    expect(dev).toMatchObject({ permissionsIgnored: false, permissions: { READ: ['dev'], WRITE: [] } });
  });

  it('also warns while the file has errors', () => {
    const result = parseConfig(stringify({ loging: {}, server: { port: 'x' } }), 't.yml');
    expect(result.problems.map((p) => p.path)).toEqual(['server.port']);
    expect(result.warnings.map((w) => w.path)).toEqual(['loging']);
  });
});

describe('loading the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-config-'));

  it('reads a file and reports a missing one as a problem', async () => {
    const file = join(dir, 'vendor-agent.yml');
    writeFileSync(file, 'server:\n  port: 9000\n');
    expect((await loadConfigFile(file)).config?.server.port).toBe(9000);
    const missing = await loadConfigFile(join(dir, 'nope.yml'));
    expect(missing.problems).toEqual([{ path: '(file)', message: 'expected a readable file: no such file' }]);
  });

  it('takes --config first, then the default places in order', () => {
    expect(resolveConfigPath('conf/a.yml', '/work')).toBe('/work/conf/a.yml');
    expect(DEFAULT_CONFIG_PATHS).toEqual(['/opt/vendor/config/vendor-agent.yml', 'vendor-agent.yml']);
    expect(resolveConfigPath(undefined, '/work', (p) => p === '/opt/vendor/config/vendor-agent.yml')).toBe('/opt/vendor/config/vendor-agent.yml');
    expect(resolveConfigPath(undefined, '/work', (p) => p === '/work/vendor-agent.yml')).toBe('/work/vendor-agent.yml');
    expect(resolveConfigPath(undefined, '/work', () => false)).toBe('/opt/vendor/config/vendor-agent.yml');
  });
});

describe('file paths', () => {
  it('may contain spaces but not be empty', () => {
    const result = parseConfig(stringify({ kubernetes: { accounts: [{ name: 'a', kubeConfigFile: '/etc/kube configs/a.yml' }] } }), 't.yml');
    expect(result.config?.kubernetes.accounts[0]?.kubeConfigFile).toBe('/etc/kube configs/a.yml');
    expect(problems({ kubernetes: { accounts: [{ name: 'a', kubeConfigFile: '' }] } })).toEqual({
      'kubernetes.accounts[0].kubeConfigFile': 'expected a kubeconfig file path or secret reference, got ""',
    });
  });

  it('kubeconfig contents and references to unknown engines are problems, and their values are never shown', () => {
    const token = 's3cr3t-kube-token-0123456789';
    const result = parseConfig(
      stringify({
        driver: { auth: { token: 'encrypted:nosuchengine!x:y' } },
        kubernetes: {
          accounts: [
            { name: 'a', kubeConfigFile: `{"apiVersion":"v1","users":[{"user":{"token":"${token}"}}]}` },
            { name: 'b', kubeconfigFile: `apiVersion: v1\nusers:\n- user:\n    token: ${token}\n` },
            { name: 'c', kubeConfigFile: 'encryptedFile:nosuchengine!x:y' },
          ],
        },
      }),
      't.yml',
    );
    expect(result.config).toBeUndefined();
    expect(Object.fromEntries(result.problems.map((p) => [p.path, `${p.message}, got ${p.value}`]))).toEqual({
      'kubernetes.accounts[0].kubeConfigFile': 'expected a kubeconfig file path or secret reference: must be a file path or a secret reference, not kubeconfig contents, got a string (value hidden)',
      'kubernetes.accounts[1].kubeconfigFile': 'expected a kubeconfig file path or secret reference: must be a file path or a secret reference, not kubeconfig contents, got a string (value hidden)',
      'kubernetes.accounts[2].kubeConfigFile': expect.stringMatching(/^expected a kubeconfig file path or secret reference: invalid encryptedFile reference: the engine is not known .*, got a string \(value hidden\)$/),
      'driver.auth.token': expect.stringMatching(/^expected a secret reference the agent can resolve: invalid encrypted reference: the engine is not known .*, got a string \(value hidden\)$/),
    });
    expect(formatReport(result)).not.toContain(token);
    expect(formatReport(result)).not.toContain('nosuchengine');
  });
});
