import * as v from 'valibot';
import {
  SETTING_DEFAULTS,
  accountName,
  crdEntries,
  hasWhitespace,
  keyRule,
  kubeconfigReference,
  oneKubeconfigSpelling,
  settingValues,
  withDefaults,
  type FullSettings,
} from '../../shared/accounts/settings.ts';
import { MAX_STATIC_ACCOUNTS } from '../../shared/accounts/model.ts';
import { SECRET_ENGINE_NAMES } from '../../shared/secrets/engines.ts';
import { secretsEntries, VAULT_SECRET_KEYS } from '../secrets/config.ts';
import { anyCasePattern, filePath, flag, object, integer, list, mapping, port, section, text, word } from './fields.ts';

/*
 * The whole of `vendor-agent.yml` (docs/agent-config.md): every key, type, default and allowed value.
 * Parsing yields a fully defaulted `AgentConfig`. Cross-key rules sit next to the keys they join, as
 * partial checks, so one run reports every problem of the file at once. The per-account keys are the
 * rules every account definition shares (shared/accounts/settings.ts), read here with their defaults.
 */

export const LOG_LEVELS = ['panic', 'fatal', 'error', 'warn', 'warning', 'info', 'debug', 'trace'] as const;

/** The pino level each accepted `logging.level` maps to (pino has no panic; panic is its fatal). */
const PINO_LEVEL = {
  panic: 'fatal',
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  warning: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
} as const;

export type LogLevel = (typeof PINO_LEVEL)[keyof typeof PINO_LEVEL];

const HOST_PORT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/;

const hostPort = v.pipe(
  v.string('expected host:port'),
  v.regex(HOST_PORT, 'expected host:port (for example spin-clouddriver-grpc:9091)'),
  v.check((s) => {
    const match = HOST_PORT.exec(s);
    // A string that is not host:port at all was reported by the pattern above.
    return match === null || (Number(match[1]) >= 1 && Number(match[1]) <= 65535);
  }, 'expected host:port with a port from 1 to 65535'),
  v.description('Host and port of the driver service or of a gRPC proxy endpoint.'),
);

const tokenCommand = mapping(
  {
    command: word('Command run to obtain the token.', 'a command (non-empty string)'),
    args: list(v.string('expected a string'), 'Arguments of the command.'),
    format: v.optional(
      v.pipe(
        v.picklist(['', 'raw', 'json'], 'expected one of raw, json or an empty string'),
        v.description('`raw`: the command prints the token. `json` or empty: it prints a JSON object with an attribute `token`.'),
      ),
      '',
    ),
    refreshIntervalSeconds: v.optional(integer(0, 'The command is run every this many seconds; 0 runs it once.'), 0),
  },
  'Command run to obtain the bearer token.',
);

const driverTls = v.optional(
  v.pipe(
    object(
      {
        serverName: v.optional(word('Server name expected on the driver certificate, overriding the host name.')),
        insecureSkipVerify: flag(false, 'Do not verify the driver certificate.'),
        clientCertFile: v.optional(filePath('Client certificate file (PEM) for mTLS.')),
        clientKeyFile: v.optional(filePath('Client key file (PEM), when not in the certificate file.')),
        clientKeyFilePassword: v.optional(text('Password of the client key file.')),
        cacertFile: v.optional(
          filePath('Trust store (PEM) the driver certificate is verified against; default: the system trust store.'),
        ),
      },
      'expected a mapping of keys to values',
    ),
    v.forward(
      v.partialCheck(
        [['clientCertFile'], ['clientKeyFile']],
        (t) => t.clientKeyFile === undefined || t.clientCertFile !== undefined,
        'expected a clientCertFile when clientKeyFile is given',
      ),
      ['clientCertFile'],
    ),
    v.description('TLS towards the driver.'),
  ),
  {},
);

const driver = section(
  {
    auth: v.optional(
      v.pipe(
        object(
          {
            token: v.optional(text('Bearer token added to each request back to the driver.')),
            tokenCommand: v.optional(tokenCommand),
          },
          'expected a mapping of keys to values',
        ),
        v.forward(
          v.partialCheck(
            [['token'], ['tokenCommand']],
            (a) => a.token === undefined || a.tokenCommand === undefined,
            'expected token or tokenCommand, not both',
          ),
          ['tokenCommand'],
        ),
        v.description('Authentication to the driver service.'),
      ),
      {},
    ),
    grpc: v.optional(hostPort, 'spin-clouddriver-grpc:9091'),
    keepAliveHeartbeatSeconds: v.optional(
      integer(0, 'Seconds between gRPC keep-alive pings; not set: every 60 seconds; 0: never.'),
    ),
    keepAliveTimeOutSeconds: v.optional(integer(1, 'Seconds to wait for a keep-alive answer before the connection is closed.')),
    insecure: flag(false, 'When true, the driver endpoint is a non-TLS server.'),
    noProxy: flag(false, 'Ignore HTTP_PROXY, HTTPS_PROXY and NO_PROXY when connecting to the driver.'),
    responseRetries: section(
      {
        enabled: flag(true, 'Retry sending a response to the driver when it fails.'),
        maxRetries: v.optional(integer(0, 'Number of retries.'), 1200),
        backOffMs: v.optional(integer(0, 'Wait between retries, in milliseconds.'), 3000),
      },
      'Retries of responses sent to the driver.',
    ),
    tls: driverTls,
  },
  'Connection to the control plane (the driver service).',
);

const retries = section(
  {
    enabled: flag(true, 'Retry failed requests to the cluster API server.'),
    maxRetries: v.optional(integer(0, 'Number of tries of the same request.'), 3),
    backOffMs: v.optional(integer(0, 'Wait between attempts, in milliseconds.'), 3000),
    retryAnyError: flag(false, 'When true, any API server error is retried; otherwise only errors containing an item of retryableErrors.'),
    retryableErrors: v.optional(
      v.pipe(
        v.array(v.pipe(v.string('expected a string'), v.minLength(1, 'expected a non-empty string')), 'expected a list'),
        v.description('Error substrings that trigger a retry when retryAnyError is false.'),
      ),
      () => ['timeout', 'deadline exceeded'],
    ),
  },
  'Retries of requests to the cluster API servers.',
);

const crd = crdEntries('expected');
const s = settingValues(
  'expected',
  mapping({ kind: crd.kind, scope: v.optional(crd.scope, SETTING_DEFAULTS.crdScope) }, 'A custom resource definition exposed to the control plane.'),
);
const d = SETTING_DEFAULTS;

/** The per-account keys (shared/accounts/settings.ts) with their defaults filled in, as the agent reads its file. */
const accountEntries = {
  name: accountName('expected'),
  context: v.optional(s.context, d.context),
  kubeConfigFile: v.optional(v.pipe(kubeconfigReference('expected'), v.description('Path of the kubeconfig file when serviceAccount is not used.'))),
  kubeconfigFile: v.optional(v.pipe(kubeconfigReference('expected'), v.description('Same as kubeConfigFile (the spelling used by the management API).'))),
  serviceAccount: v.optional(s.serviceAccount, d.serviceAccount),
  insecure: v.optional(s.insecure, d.insecure),
  noProxy: v.optional(s.noProxy, d.noProxy),
  oAuthScopes: v.optional(s.oAuthScopes, d.oAuthScopes),
  namespaces: v.optional(s.namespaces, d.namespaces),
  omitNamespaces: v.optional(s.omitNamespaces, d.omitNamespaces),
  onlyNamespacedResources: v.optional(s.onlyNamespacedResources, d.onlyNamespacedResources),
  customResourceDefinitions: v.optional(s.customResourceDefinitions, d.customResourceDefinitions),
  kinds: v.optional(s.kinds, d.kinds),
  omitKinds: v.optional(s.omitKinds, d.omitKinds),
  clusterScopedKinds: v.optional(s.clusterScopedKinds, d.clusterScopedKinds),
  onlySpinnakerManaged: v.optional(s.onlySpinnakerManaged, d.onlySpinnakerManaged),
  metrics: v.optional(s.metrics, d.metrics),
  maxResumableResourceAgeMs: v.optional(s.maxResumableResourceAgeMs, d.maxResumableResourceAgeMs),
  permissions: v.optional(s.permissions, d.permissions),
};

type RawAccount = v.InferOutput<v.ObjectSchema<typeof accountEntries, undefined>>;

export interface AccountConfig extends Omit<FullSettings, 'permissions'> {
  name: string;
  /** The kubeconfig path, from `kubeConfigFile` or its alias `kubeconfigFile`. */
  kubeConfigFile: string | undefined;
  /** Roles per permission type, merged over the entries of the list; both empty: everyone has access. */
  permissions: { READ: string[]; WRITE: string[] };
  /**
   * True when a role name contains whitespace: per docs/agent-config.md#permissions the permissions are then not applied
   * and every user gets access to the account (`permissions` is left empty to say exactly that).
   */
  permissionsIgnored: boolean;
}

function toAccount(raw: RawAccount): AccountConfig {
  const { name, kubeConfigFile, kubeconfigFile, ...given } = raw;
  const { permissions, ...settings } = withDefaults(given);
  const READ = permissions.flatMap((p) => p.READ ?? []);
  const WRITE = permissions.flatMap((p) => p.WRITE ?? []);
  const permissionsIgnored = [...READ, ...WRITE].some(hasWhitespace);
  return {
    name,
    kubeConfigFile: kubeConfigFile ?? kubeconfigFile,
    ...settings,
    permissions: permissionsIgnored ? { READ: [], WRITE: [] } : { READ: [...new Set(READ)], WRITE: [...new Set(WRITE)] },
    permissionsIgnored,
  };
}

const account = v.pipe(
  object(accountEntries, 'expected a mapping with at least a name'),
  oneKubeconfigSpelling<RawAccount>('expected', 'kubeConfigFile'),
  // The agent's own entry is the only place its kubeconfig can come from (a driver definition may
  // leave it to the registration), so the file must say how to connect, in one way only.
  keyRule<RawAccount>(
    ['serviceAccount', 'kubeConfigFile', 'kubeconfigFile'],
    'serviceAccount',
    (a) => a['serviceAccount'] !== ((a['kubeConfigFile'] ?? a['kubeconfigFile']) !== undefined),
    'expected either serviceAccount: true or a kubeConfigFile, and not both',
  ),
  v.transform(toAccount),
);

const accounts = v.optional(
  v.pipe(
    v.array(account, 'expected a list of accounts'),
    v.maxLength(MAX_STATIC_ACCOUNTS, `expected at most ${MAX_STATIC_ACCOUNTS} accounts: one agent defines no more (docs/agent-config.md#per-account-kubernetesaccounts)`),
    v.rawCheck(({ dataset, addIssue }) => {
      const items: unknown[] = Array.isArray(dataset.value) ? dataset.value : [];
      const seen = new Set<string>();
      items.forEach((item, index) => {
        const name = typeof item === 'object' && item !== null ? (item as { name?: unknown }).name : undefined;
        if (typeof name !== 'string') return;
        if (seen.has(name)) {
          addIssue({
            message: 'expected a name not used by an earlier account',
            input: name,
            path: [
              { type: 'array', origin: 'value', input: items, key: index, value: item },
              { type: 'object', origin: 'value', input: item as Record<string, unknown>, key: 'name', value: name },
            ],
          });
        }
        seen.add(name);
      });
    }),
    v.description('Accounts (clusters) of this agent. Agent mode: one account with serviceAccount: true.'),
  ),
  [],
);

const ABSOLUTE_PATH = 'an absolute path';
const absolutePath = v.pipe(v.string(`expected ${ABSOLUTE_PATH}`), v.regex(/^\/.*$/, `expected ${ABSOLUTE_PATH}`), v.check((s) => !/[\u0000-\u001f]/.test(s), `expected ${ABSOLUTE_PATH}`));
const COMMAND = 'an absolute path or a command name without /';
const command = v.pipe(v.string(`expected ${COMMAND}`), v.regex(/^(?:\/.*|[^/\s]+)$/, `expected ${COMMAND}`));

const secretReferencePattern = mapping(
  {
    engine: v.pipe(
      v.picklist(SECRET_ENGINE_NAMES, `expected one of ${SECRET_ENGINE_NAMES.join(', ')}`),
      v.description(`Secret engine: ${SECRET_ENGINE_NAMES.join(', ')}.`),
    ),
    path: v.pipe(
      v.string('expected a path pattern'),
      v.minLength(1, 'expected a non-empty path pattern'),
      v.description('Where the secret lives, * matching any characters: vault <mount>/<path> (e.g. secret/kube/*), secrets-manager <region>/<secret name or ARN> (e.g. eu-west-1/kube/*).'),
    ),
  },
  'Secrets a driver-assigned kubeconfig reference may name.',
);

const assignedAccounts = section(
  {
    kubeconfigDirs: list(
      absolutePath,
      'Folders the kubeconfig files of driver-assigned accounts may be read from, and every file such a kubeconfig names; checked after resolving .. and symbolic links. Empty: none.',
    ),
    secretReferences: list(secretReferencePattern, 'Secret references a driver-assigned account may name (engine and path pattern). Empty: none.'),
    execCommands: list(
      command,
      'Executables the exec plugin or the gcp auth-provider cmd-path of a driver-assigned kubeconfig may run: absolute paths, or names looked up in PATH. Empty: none.',
    ),
  },
  'What a kubeconfig of an account the driver assigns (not one of kubernetes.accounts) may read and run; nothing unless listed (docs/agent-config.md#driver-assigned-accounts).',
);

const kubernetes = section(
  {
    reconnectTimeoutMs: v.optional(integer(0, 'Wait before reconnecting to the control plane, in milliseconds.'), 5000),
    noProxy: flag(false, 'Ignore the proxy environment variables when connecting to any cluster.'),
    retries,
    assignedAccounts,
    accounts,
  },
  'Kubernetes-wide settings and the accounts.',
);

const tasks = section(
  {
    totalBudget: v.optional(integer(0, 'When greater than 0, the total cost of running tasks may not exceed it. Watches are free.'), 0),
    budgetPerAccount: v.optional(integer(0, 'When greater than 0, the cost of running tasks of one account may not exceed it.'), 0),
    queueCheckFrequencyMs: v.optional(integer(1, 'How often tasks waiting for budget are checked, in milliseconds.'), 2000),
  },
  'Task budgets.',
);

const logging = section(
  {
    file: v.optional(filePath('File to write logs to; stdout or stderr for those streams.', 'a file path, stdout or stderr'), 'stdout'),
    format: v.optional(v.pipe(v.picklist(['text', 'json'], 'expected text or json'), v.description('Log line format.')), 'text'),
    level: v.optional(
      v.pipe(
        v.string(`expected one of ${LOG_LEVELS.join(', ')} (any case)`),
        v.regex(anyCasePattern(LOG_LEVELS), `expected one of ${LOG_LEVELS.join(', ')} (any case)`),
        v.description(`Lowest level logged, any case: ${LOG_LEVELS.join(', ')}.`),
        v.transform((s): LogLevel => PINO_LEVEL[s.toLowerCase() as keyof typeof PINO_LEVEL]),
      ),
      'INFO',
    ),
  },
  'Logging.',
);

const pprof = section(
  {
    enabled: flag(false, 'Serve the profiling endpoint, on loopback only (its heap snapshots hold every secret of the agent).'),
    port: v.optional(port('Port of the profiling endpoint.'), 6060),
  },
  'Profiling endpoint.',
);

const prometheus = section(
  {
    enabled: flag(false, 'Serve the metrics on /metrics and /prometheus_metrics.'),
    host: v.optional(word('Host (interface) the metrics endpoint binds to; every interface by default, as Prometheus scrapes the pod address.', 'a host name or address'), '0.0.0.0'),
    port: v.optional(port('Port of the metrics endpoint.'), 8008),
  },
  'Prometheus metrics endpoint.',
);

const CLIENT_AUTH = ['none', 'want', 'need'] as const;

const sslEntries = {
  enabled: flag(false, 'Serve the health endpoint over TLS.'),
  certFile: v.optional(filePath('Server certificate (PEM).')),
  keyFile: v.optional(filePath('Server private key (PEM).')),
  keyPassword: v.optional(text('Password of the private key (same as keyFilePassword).')),
  keyFilePassword: v.optional(text('Password of the private key file.')),
  caCertFile: v.optional(filePath('CA certificates (PEM) client certificates are verified against.')),
  clientAuth: v.optional(
    v.pipe(
      v.picklist(CLIENT_AUTH, 'expected none, want or need'),
      v.description('Client certificates: none; want (asked for, verified when given); need (required).'),
    ),
    'none',
  ),
};

const ssl = v.optional(
  v.pipe(
    object(sslEntries, 'expected a mapping of keys to values'),
    v.forward(
      v.partialCheck([['enabled'], ['certFile']], (s) => !s.enabled || s.certFile !== undefined, 'expected a certFile when enabled is true'),
      ['certFile'],
    ),
    v.forward(
      v.partialCheck([['enabled'], ['keyFile']], (s) => !s.enabled || s.keyFile !== undefined, 'expected a keyFile when enabled is true'),
      ['keyFile'],
    ),
    v.forward(
      v.partialCheck(
        [['enabled'], ['clientAuth'], ['caCertFile']],
        (s) => !s.enabled || s.clientAuth === 'none' || s.caCertFile !== undefined,
        'expected a caCertFile when clientAuth is want or need',
      ),
      ['caCertFile'],
    ),
    v.forward(
      v.partialCheck(
        [['keyPassword'], ['keyFilePassword']],
        (s) => s.keyPassword === undefined || s.keyFilePassword === undefined || s.keyPassword === s.keyFilePassword,
        'expected keyPassword and keyFilePassword to be equal when both are given',
      ),
      ['keyFilePassword'],
    ),
    v.description('TLS of the health endpoint only.'),
  ),
  {},
);

const server = section(
  {
    host: v.optional(word('Host (interface) the health server binds to.', 'a host name or address'), 'localhost'),
    port: v.optional(port('Port of the health server.'), 8082),
    ssl,
  },
  'Health check server.',
);

const secrets = section(secretsEntries, 'Secret engines resolving encrypted: and encryptedFile: references (docs/secrets.md).');

export const agentConfigSchema = v.pipe(
  object(
    {
      driver,
      kubernetes,
      timeoutSeconds: v.optional(integer(0, 'Maximum wait for a server request, in seconds; 0: no timeout.'), 0),
      tasks,
      logging,
      pprof,
      prometheus,
      server,
      secrets,
    },
    'expected a mapping of keys to values at the top of the file',
  ),
  v.description('Configuration of the vendor agent (vendor-agent.yml).'),
);

export type AgentConfig = v.InferOutput<typeof agentConfigSchema>;
export type DriverConnectionConfig = AgentConfig['driver'];
export type TasksConfig = AgentConfig['tasks'];
export type LoggingConfig = AgentConfig['logging'];
export type ServerConfig = AgentConfig['server'];
export type SslConfig = ServerConfig['ssl'];

/**
 * Key paths whose values are never printed: tokens, passwords, the vault credentials, and `secrets`
 * or `secrets.vault` themselves (a credential pasted where the section belongs).
 */
export const SECRET_KEY_PATHS: readonly RegExp[] = [
  /^driver\.auth\.token$/,
  /^driver\.auth\.tokenCommand\.args(\[\d+\])?$/,
  /^driver\.tls\.clientKeyFilePassword$/,
  /^server\.ssl\.key(File)?Password$/,
  /^secrets(\.vault)?$/,
  new RegExp(`^secrets\\.vault\\.(${VAULT_SECRET_KEYS.join('|')})$`),
];
