import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { keyPaths } from '../../shared/config-report/keys.ts';
import { parseConfig } from './load.ts';
import { agentConfigSchema, type AgentConfig } from './schema.ts';

type Raw = Record<string, unknown>;

/** A raw file with one multi-account entry plus `extra` keys on that account. */
function withAccount(extra: Raw = {}, base: Raw = { name: 'prod', kubeConfigFile: '/kube/prod' }): Raw {
  return { kubernetes: { accounts: [{ ...base, ...extra }] } };
}
const serviceAccountBase = { name: 'prod', serviceAccount: true };

function parse(raw: Raw): AgentConfig {
  const result = parseConfig(stringify(raw), 'test.yml');
  expect(result.problems).toEqual([]);
  return result.config!;
}

function get(value: unknown, path: string): unknown {
  let cur = value;
  for (const part of path.replace(/\[\]/g, '.0').split('.')) {
    cur = (cur as Record<string, unknown> | undefined)?.[part];
  }
  return cur;
}

interface KeyCase {
  /** As listed by keyPaths(). */
  key: string;
  /** The raw file whose parse shows the default (the key itself left out). */
  base?: Raw;
  default: unknown;
  set: Raw;
  expected: unknown;
  /** Where to read the value in the parsed config, when not at `key`. */
  at?: string;
}

const tokenCommand = (extra: Raw = {}) => ({ driver: { auth: { tokenCommand: { command: 'get-token', ...extra } } } });
const crd = (extra: Raw = {}) => withAccount({ customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', ...extra }] });
const ssl = (extra: Raw = {}) => ({ server: { ssl: { enabled: true, certFile: '/tls/c.pem', keyFile: '/tls/k.pem', ...extra } } });
const vault = (keys: Raw) => ({ secrets: { vault: keys } });

/** Every key of docs/agent-config.md#keys: its default, and one value that is not the default. */
const CASES: KeyCase[] = [
  { key: 'driver.auth.token', default: undefined, set: { driver: { auth: { token: 't0k3n' } } }, expected: 't0k3n' },
  { key: 'driver.auth.tokenCommand.command', default: undefined, at: 'driver.auth.tokenCommand', set: tokenCommand(), expected: { command: 'get-token', args: [], format: '', refreshIntervalSeconds: 0 } },
  { key: 'driver.auth.tokenCommand.args', base: tokenCommand(), default: [], set: tokenCommand({ args: ['--audience', 'driver'] }), expected: ['--audience', 'driver'] },
  { key: 'driver.auth.tokenCommand.format', base: tokenCommand(), default: '', set: tokenCommand({ format: 'raw' }), expected: 'raw' },
  { key: 'driver.auth.tokenCommand.refreshIntervalSeconds', base: tokenCommand(), default: 0, set: tokenCommand({ refreshIntervalSeconds: 300 }), expected: 300 },
  { key: 'driver.grpc', default: 'spin-clouddriver-grpc:9091', set: { driver: { grpc: 'driver.example.com:443' } }, expected: 'driver.example.com:443' },
  { key: 'driver.keepAliveHeartbeatSeconds', default: undefined, set: { driver: { keepAliveHeartbeatSeconds: 0 } }, expected: 0 },
  { key: 'driver.keepAliveTimeOutSeconds', default: undefined, set: { driver: { keepAliveTimeOutSeconds: 20 } }, expected: 20 },
  { key: 'driver.insecure', default: false, set: { driver: { insecure: true } }, expected: true },
  { key: 'driver.noProxy', default: false, set: { driver: { noProxy: true } }, expected: true },
  { key: 'driver.responseRetries.enabled', default: true, set: { driver: { responseRetries: { enabled: false } } }, expected: false },
  { key: 'driver.responseRetries.maxRetries', default: 1200, set: { driver: { responseRetries: { maxRetries: 5 } } }, expected: 5 },
  { key: 'driver.responseRetries.backOffMs', default: 3000, set: { driver: { responseRetries: { backOffMs: 250 } } }, expected: 250 },
  { key: 'driver.tls.serverName', default: undefined, set: { driver: { tls: { serverName: 'driver.internal' } } }, expected: 'driver.internal' },
  { key: 'driver.tls.insecureSkipVerify', default: false, set: { driver: { tls: { insecureSkipVerify: true } } }, expected: true },
  { key: 'driver.tls.clientCertFile', default: undefined, set: { driver: { tls: { clientCertFile: '/tls/client.pem' } } }, expected: '/tls/client.pem' },
  { key: 'driver.tls.clientKeyFile', default: undefined, set: { driver: { tls: { clientCertFile: '/tls/c.pem', clientKeyFile: '/tls/k.pem' } } }, expected: '/tls/k.pem' },
  { key: 'driver.tls.clientKeyFilePassword', default: undefined, set: { driver: { tls: { clientKeyFilePassword: 'pw' } } }, expected: 'pw' },
  { key: 'driver.tls.cacertFile', default: undefined, set: { driver: { tls: { cacertFile: '/tls/ca.pem' } } }, expected: '/tls/ca.pem' },
  { key: 'kubernetes.reconnectTimeoutMs', default: 5000, set: { kubernetes: { reconnectTimeoutMs: 100 } }, expected: 100 },
  { key: 'kubernetes.noProxy', default: false, set: { kubernetes: { noProxy: true } }, expected: true },
  { key: 'kubernetes.retries.enabled', default: true, set: { kubernetes: { retries: { enabled: false } } }, expected: false },
  { key: 'kubernetes.retries.maxRetries', default: 3, set: { kubernetes: { retries: { maxRetries: 7 } } }, expected: 7 },
  { key: 'kubernetes.retries.backOffMs', default: 3000, set: { kubernetes: { retries: { backOffMs: 10 } } }, expected: 10 },
  { key: 'kubernetes.retries.retryAnyError', default: false, set: { kubernetes: { retries: { retryAnyError: true } } }, expected: true },
  { key: 'kubernetes.retries.retryableErrors', default: ['timeout', 'deadline exceeded'], set: { kubernetes: { retries: { retryableErrors: ['connection reset'] } } }, expected: ['connection reset'] },
  { key: 'kubernetes.assignedAccounts.kubeconfigDirs', default: [], set: { kubernetes: { assignedAccounts: { kubeconfigDirs: ['/etc/vendor/kubeconfigs'] } } }, expected: ['/etc/vendor/kubeconfigs'] },
  { key: 'kubernetes.assignedAccounts.secretReferences[].engine', default: undefined, set: { kubernetes: { assignedAccounts: { secretReferences: [{ engine: 'vault', path: 'secret/kube/*' }] } } }, expected: 'vault' },
  { key: 'kubernetes.assignedAccounts.secretReferences[].path', default: undefined, set: { kubernetes: { assignedAccounts: { secretReferences: [{ engine: 'secrets-manager', path: 'eu-west-1/kube/*' }] } } }, expected: 'eu-west-1/kube/*' },
  { key: 'kubernetes.assignedAccounts.execCommands', default: [], set: { kubernetes: { assignedAccounts: { execCommands: ['aws', '/usr/local/bin/gke-gcloud-auth-plugin'] } } }, expected: ['aws', '/usr/local/bin/gke-gcloud-auth-plugin'] },
  { key: 'kubernetes.accounts[].name', base: withAccount(), default: 'prod', set: withAccount({ name: 'staging-eu' }), expected: 'staging-eu' },
  { key: 'kubernetes.accounts[].context', base: withAccount(), default: '', set: withAccount({ context: 'eu-1' }), expected: 'eu-1' },
  { key: 'kubernetes.accounts[].kubeConfigFile', base: withAccount({}, serviceAccountBase), default: undefined, set: withAccount(), expected: '/kube/prod' },
  { key: 'kubernetes.accounts[].kubeconfigFile', at: 'kubernetes.accounts[].kubeConfigFile', base: withAccount({}, serviceAccountBase), default: undefined, set: withAccount({}, { name: 'prod', kubeconfigFile: '/kube/alias' }), expected: '/kube/alias' },
  { key: 'kubernetes.accounts[].serviceAccount', base: withAccount(), default: false, set: withAccount({}, serviceAccountBase), expected: true },
  { key: 'kubernetes.accounts[].insecure', base: withAccount(), default: false, set: withAccount({ insecure: true }), expected: true },
  { key: 'kubernetes.accounts[].noProxy', base: withAccount(), default: false, set: withAccount({ noProxy: true }), expected: true },
  { key: 'kubernetes.accounts[].oAuthScopes', base: withAccount(), default: [], set: withAccount({ oAuthScopes: ['https://www.googleapis.com/auth/cloud-platform'] }), expected: ['https://www.googleapis.com/auth/cloud-platform'] },
  { key: 'kubernetes.accounts[].namespaces', base: withAccount(), default: [], set: withAccount({ namespaces: ['default', 'team-a'] }), expected: ['default', 'team-a'] },
  { key: 'kubernetes.accounts[].omitNamespaces', base: withAccount(), default: [], set: withAccount({ omitNamespaces: ['kube-system'] }), expected: ['kube-system'] },
  { key: 'kubernetes.accounts[].onlyNamespacedResources', base: withAccount(), default: false, set: withAccount({ onlyNamespacedResources: true, namespaces: ['default'] }), expected: true },
  { key: 'kubernetes.accounts[].customResourceDefinitions[].kind', at: 'kubernetes.accounts[].customResourceDefinitions', base: withAccount(), default: [], set: crd(), expected: [{ kind: 'Rollout.argoproj.io', scope: 'Namespaced' }] },
  { key: 'kubernetes.accounts[].customResourceDefinitions[].scope', base: crd(), default: 'Namespaced', set: crd({ scope: 'Cluster' }), expected: 'Cluster' },
  { key: 'kubernetes.accounts[].kinds', base: withAccount(), default: [], set: withAccount({ kinds: ['deployment', 'pod'] }), expected: ['deployment', 'pod'] },
  { key: 'kubernetes.accounts[].omitKinds', base: withAccount(), default: [], set: withAccount({ omitKinds: ['secret'] }), expected: ['secret'] },
  { key: 'kubernetes.accounts[].clusterScopedKinds', base: withAccount(), default: [], set: withAccount({ namespaces: ['shop'], clusterScopedKinds: ['ClusterRole.rbac.authorization.k8s.io', 'PersistentVolume'] }), expected: ['ClusterRole.rbac.authorization.k8s.io', 'PersistentVolume'] },
  { key: 'kubernetes.accounts[].onlySpinnakerManaged', base: withAccount(), default: false, set: withAccount({ onlySpinnakerManaged: true }), expected: true },
  { key: 'kubernetes.accounts[].metrics', base: withAccount(), default: false, set: withAccount({ metrics: true }), expected: true },
  { key: 'kubernetes.accounts[].maxResumableResourceAgeMs', base: withAccount(), default: 300000, set: withAccount({ maxResumableResourceAgeMs: 60000 }), expected: 60000 },
  { key: 'kubernetes.accounts[].permissions[].READ', at: 'kubernetes.accounts[].permissions', base: withAccount(), default: { READ: [], WRITE: [] }, set: withAccount({ permissions: [{ READ: ['dev', 'ops'] }] }), expected: { READ: ['dev', 'ops'], WRITE: [] } },
  { key: 'kubernetes.accounts[].permissions[].WRITE', at: 'kubernetes.accounts[].permissions', base: withAccount(), default: { READ: [], WRITE: [] }, set: withAccount({ permissions: [{ WRITE: ['ops'] }, { READ: ['dev'], WRITE: ['sre'] }] }), expected: { READ: ['dev'], WRITE: ['ops', 'sre'] } },
  { key: 'timeoutSeconds', default: 0, set: { timeoutSeconds: 30 }, expected: 30 },
  { key: 'tasks.totalBudget', default: 0, set: { tasks: { totalBudget: 40 } }, expected: 40 },
  { key: 'tasks.budgetPerAccount', default: 0, set: { tasks: { budgetPerAccount: 8 } }, expected: 8 },
  { key: 'tasks.queueCheckFrequencyMs', default: 2000, set: { tasks: { queueCheckFrequencyMs: 500 } }, expected: 500 },
  { key: 'logging.file', default: 'stdout', set: { logging: { file: '/var/log/agent.log' } }, expected: '/var/log/agent.log' },
  { key: 'logging.format', default: 'text', set: { logging: { format: 'json' } }, expected: 'json' },
  { key: 'logging.level', default: 'info', set: { logging: { level: 'DEBUG' } }, expected: 'debug' },
  { key: 'pprof.enabled', default: false, set: { pprof: { enabled: true } }, expected: true },
  { key: 'pprof.port', default: 6060, set: { pprof: { port: 16060 } }, expected: 16060 },
  { key: 'prometheus.enabled', default: false, set: { prometheus: { enabled: true } }, expected: true },
  { key: 'prometheus.port', default: 8008, set: { prometheus: { port: 9090 } }, expected: 9090 },
  { key: 'prometheus.host', default: '0.0.0.0', set: { prometheus: { host: '127.0.0.1' } }, expected: '127.0.0.1' },
  { key: 'server.host', default: 'localhost', set: { server: { host: '0.0.0.0' } }, expected: '0.0.0.0' },
  { key: 'server.port', default: 8082, set: { server: { port: 18082 } }, expected: 18082 },
  { key: 'server.ssl.enabled', default: false, set: ssl(), expected: true },
  { key: 'server.ssl.certFile', default: undefined, set: ssl(), expected: '/tls/c.pem' },
  { key: 'server.ssl.keyFile', default: undefined, set: ssl(), expected: '/tls/k.pem' },
  { key: 'server.ssl.keyPassword', default: undefined, set: ssl({ keyPassword: 'pw' }), expected: 'pw' },
  { key: 'server.ssl.keyFilePassword', default: undefined, set: ssl({ keyFilePassword: 'pw' }), expected: 'pw' },
  { key: 'server.ssl.caCertFile', default: undefined, set: ssl({ caCertFile: '/tls/ca.pem' }), expected: '/tls/ca.pem' },
  { key: 'server.ssl.clientAuth', default: 'none', set: ssl({ clientAuth: 'need', caCertFile: '/tls/ca.pem' }), expected: 'need' },
  { key: 'secrets.vault.enabled', default: false, set: vault({ enabled: true, url: 'https://vault:8200' }), expected: true },
  { key: 'secrets.vault.url', default: undefined, set: vault({ url: 'https://vault.example:8200/prefix' }), expected: 'https://vault.example:8200/prefix' },
  { key: 'secrets.vault.authMethod', default: 'TOKEN', set: vault({ authMethod: 'kubernetes' }), expected: 'KUBERNETES' },
  { key: 'secrets.vault.token', default: undefined, set: vault({ token: 's.agent-token' }), expected: 's.agent-token' },
  { key: 'secrets.vault.role', default: undefined, set: vault({ role: 'vendor-agent' }), expected: 'vendor-agent' },
  { key: 'secrets.vault.path', default: undefined, set: vault({ path: 'k8s-prod' }), expected: 'k8s-prod' },
  { key: 'secrets.vault.serviceAccountTokenFile', default: '/var/run/secrets/kubernetes.io/serviceaccount/token', set: vault({ serviceAccountTokenFile: '/var/run/secrets/tokens/vault' }), expected: '/var/run/secrets/tokens/vault' },
  { key: 'secrets.vault.roleId', default: undefined, set: vault({ roleId: 'role-1' }), expected: 'role-1' },
  { key: 'secrets.vault.secretId', default: undefined, set: vault({ secretId: 'secret-1' }), expected: 'secret-1' },
  { key: 'secrets.vault.username', default: undefined, set: vault({ username: 'agent' }), expected: 'agent' },
  { key: 'secrets.vault.password', default: undefined, set: vault({ password: 'pass word' }), expected: 'pass word' },
  { key: 'secrets.vault.userAuthPath', default: undefined, set: vault({ userAuthPath: 'ldap-users' }), expected: 'ldap-users' },
  { key: 'secrets.vault.namespace', default: undefined, set: vault({ namespace: 'team-a' }), expected: 'team-a' },
  { key: 'secrets.vault.timeoutMs', default: 10000, set: vault({ timeoutMs: 2500 }), expected: 2500 },
  { key: 'secrets.vault.tls.caCertFile', default: undefined, set: vault({ tls: { caCertFile: '/tls/vault-ca.pem' } }), expected: '/tls/vault-ca.pem' },
  { key: 'secrets.vault.tls.insecureSkipVerify', default: false, set: vault({ tls: { insecureSkipVerify: true } }), expected: true },
  { key: 'secrets.vault.tls.serverName', default: undefined, set: vault({ tls: { serverName: 'vault.internal' } }), expected: 'vault.internal' },
  { key: 'secrets.vault.tls.clientCertFile', default: undefined, set: vault({ tls: { clientCertFile: '/tls/agent.pem' } }), expected: '/tls/agent.pem' },
  { key: 'secrets.vault.tls.clientKeyFile', default: undefined, set: vault({ tls: { clientKeyFile: '/tls/agent-key.pem' } }), expected: '/tls/agent-key.pem' },
];

describe('vendor-agent.yml keys', () => {
  it('the table covers every key of the schema, once', () => {
    expect(CASES.map((c) => c.key).sort()).toEqual(keyPaths(agentConfigSchema).sort());
  });

  it.each(CASES)('$key: default and a non-default value', (c) => {
    const at = c.at ?? c.key;
    expect(get(parse(c.base ?? {}), at)).toEqual(c.default);
    expect(get(parse(c.set), at)).toEqual(c.expected);
  });

  it('an empty file is a valid configuration with every default', () => {
    const result = parseConfig('', 'empty.yml');
    expect(result.problems).toEqual([]);
    expect(result.config?.kubernetes.accounts).toEqual([]);
  });

  it('a key with no value counts as left out', () => {
    const config = parse({ logging: null, driver: { grpc: null }, kubernetes: { accounts: null } });
    expect(config.logging.level).toBe('info');
    expect(config.driver.grpc).toBe('spin-clouddriver-grpc:9091');
  });

  it.each([
    ['panic', 'fatal'],
    ['FATAL', 'fatal'],
    ['Error', 'error'],
    ['warn', 'warn'],
    ['WARNING', 'warn'],
    ['info', 'info'],
    ['Debug', 'debug'],
    ['TRACE', 'trace'],
  ])('logging.level %s is accepted in any case and logs at %s', (level, pino) => {
    expect(parse({ logging: { level } }).logging.level).toBe(pino);
  });

  it.each([
    ['token', 'TOKEN'],
    ['Kubernetes', 'KUBERNETES'],
    ['APPROLE', 'APPROLE'],
    ['userPass', 'USERPASS'],
  ])('secrets.vault.authMethod %s is accepted in any case as %s', (authMethod, parsed) => {
    expect(parse({ secrets: { vault: { authMethod } } }).secrets.vault.authMethod).toBe(parsed);
  });

  it.each(['raw', 'json', ''])('driver.auth.tokenCommand.format accepts %j', (format) => {
    expect(parse(tokenCommand({ format })).driver.auth.tokenCommand?.format).toBe(format);
  });

  it('agent mode: one account that uses the pod service account', () => {
    const config = parse({ kubernetes: { accounts: [{ name: 'in-cluster', serviceAccount: true }] } });
    expect(config.kubernetes.accounts).toMatchObject([{ name: 'in-cluster', serviceAccount: true, kubeConfigFile: undefined }]);
  });

  it('multi-account mode: several accounts, each with its kubeconfig file (either spelling)', () => {
    const config = parse({
      kubernetes: {
        accounts: [
          { name: 'eu', kubeConfigFile: '/kube/eu', context: 'eu-admin' },
          { name: 'us', kubeconfigFile: 'encryptedFile:vault!e:secret!p:kube!k:us' },
        ],
      },
    });
    expect(config.kubernetes.accounts.map((a) => [a.name, a.kubeConfigFile])).toEqual([
      ['eu', '/kube/eu'],
      ['us', 'encryptedFile:vault!e:secret!p:kube!k:us'],
    ]);
    expect(config.kubernetes.accounts[0]).not.toHaveProperty('kubeconfigFile');
  });

  it('encrypted: references are plain strings to the schema', () => {
    const config = parse({ driver: { auth: { token: 'encrypted:vault!e:secret!p:agent!k:token' } } });
    expect(config.driver.auth.token).toBe('encrypted:vault!e:secret!p:agent!k:token');
  });
});
