import * as v from 'valibot';
import { anyCasePattern, filePath, filled, flag, integer, object, word } from '../config/fields.ts';

/**
 * The `secrets` section of vendor-agent.yml, part of the one configuration schema
 * (`agent/config/schema.ts`), so `validate` reports its problems by key path like any other key.
 * The inner keys of `secrets.vault` are listed in docs/agent-config.md#secret-engines-secretsvault
 * (how the engine uses them: docs/secrets.md). Credentials here (token, secretId, password) are secret-bearing keys: a
 * configuration report must redact their values.
 */
export const VAULT_AUTH_METHODS = ['TOKEN', 'KUBERNETES', 'APPROLE', 'USERPASS'] as const;
export type VaultAuthMethod = (typeof VAULT_AUTH_METHODS)[number];

export const DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const DEFAULT_AUTH_MOUNTS: Readonly<Record<Exclude<VaultAuthMethod, 'TOKEN'>, string>> = {
  KUBERNETES: 'kubernetes',
  APPROLE: 'approle',
  USERPASS: 'userpass',
};

const URL_EXPECTED = 'expected an http or https URL such as https://vault.example:8200';
function isHttpUrl(text: string): boolean {
  return URL.canParse(text) && /^https?:$/.test(new URL(text).protocol);
}

const AUTH_METHOD_EXPECTED = `expected one of ${VAULT_AUTH_METHODS.join(', ')} (any case)`;
// A pattern rather than a transform before a picklist, so the JSON Schema for editors accepts every case too.
const authMethod = v.pipe(
  v.string(AUTH_METHOD_EXPECTED),
  v.regex(anyCasePattern(VAULT_AUTH_METHODS), AUTH_METHOD_EXPECTED),
  v.description(`How the agent logs in to Vault: ${VAULT_AUTH_METHODS.join(', ')}, any case.`),
  v.transform((s) => s.toUpperCase() as VaultAuthMethod),
);

const vaultTls = v.pipe(
  object(
    {
      caCertFile: v.optional(filePath("PEM file of the CA that signed Vault's certificate; the system trust store when absent.")),
      insecureSkipVerify: flag(false, "Do not verify Vault's certificate."),
      serverName: v.optional(word("Name expected on Vault's certificate, instead of the host of url.", 'a server name without spaces')),
      clientCertFile: v.optional(filePath('PEM client certificate presented to Vault.')),
      clientKeyFile: v.optional(filePath('PEM key of clientCertFile.')),
    },
    'expected a mapping of keys to values',
  ),
  v.description('TLS towards Vault.'),
);

const vaultEntries = {
  enabled: flag(false, 'Resolve vault references.'),
  url: v.optional(v.pipe(v.string(URL_EXPECTED), v.check(isHttpUrl, URL_EXPECTED), v.description('Address of Vault, e.g. https://vault.example:8200.'))),
  authMethod: v.optional(authMethod, 'TOKEN'),
  token: v.optional(filled('TOKEN: the Vault token; VAULT_TOKEN when absent. Secret.')),
  role: v.optional(filled('KUBERNETES: the Vault role to log in as.')),
  path: v.optional(filled('Mount path of the auth method; kubernetes, approle or userpass by default.')),
  serviceAccountTokenFile: v.optional(filePath('KUBERNETES: file of the service account JWT.'), DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE),
  roleId: v.optional(filled('APPROLE: the role id.')),
  secretId: v.optional(filled('APPROLE: the secret id. Secret.')),
  username: v.optional(filled('USERPASS: the user name.')),
  password: v.optional(filled('USERPASS: the password. Secret.')),
  userAuthPath: v.optional(filled('USERPASS: mount path of the userpass method; wins over path.')),
  namespace: v.optional(filled('Vault Enterprise namespace, sent as X-Vault-Namespace.')),
  timeoutMs: v.optional(integer(1, 'Time allowed for each request to Vault, in milliseconds.'), 10_000),
  tls: v.optional(vaultTls, {}),
};

type VaultFields = v.InferOutput<v.ObjectSchema<typeof vaultEntries, string>>;
type Needed = 'url' | 'role' | 'roleId' | 'secretId' | 'username' | 'password';

/**
 * A key required when vault is enabled (and `method` is the auth method, when given). A partial
 * check, so it is reported together with problems of other vault keys, and skipped only when one of
 * the keys it reads is itself wrong.
 */
function requiredWhenEnabled(key: Needed, method?: VaultAuthMethod): v.BaseValidation<VaultFields, VaultFields, v.BaseIssue<unknown>> {
  if (method === undefined) {
    const requirement = (c: Pick<VaultFields, 'enabled' | Needed>) => !c.enabled || c[key] !== undefined;
    return v.forward(v.partialCheck([['enabled'], [key]], requirement, `expected a ${key} when enabled is true`), [key]);
  }
  const requirement = (c: Pick<VaultFields, 'enabled' | 'authMethod' | Needed>) => !c.enabled || c.authMethod !== method || c[key] !== undefined;
  return v.forward(v.partialCheck([['enabled'], ['authMethod'], [key]], requirement, `expected a ${key} when authMethod is ${method}`), [key]);
}

export const VaultConfigSchema = v.pipe(
  object(vaultEntries, 'expected a mapping of keys to values'),
  requiredWhenEnabled('url'),
  requiredWhenEnabled('role', 'KUBERNETES'),
  requiredWhenEnabled('roleId', 'APPROLE'),
  requiredWhenEnabled('secretId', 'APPROLE'),
  requiredWhenEnabled('username', 'USERPASS'),
  requiredWhenEnabled('password', 'USERPASS'),
  v.description('Vault secret engine: resolves encrypted:vault and encryptedFile:vault references (docs/secrets.md).'),
);

/** The keys of the `secrets` section; the agent's configuration schema builds its section from them. */
export const secretsEntries = {
  vault: v.optional(VaultConfigSchema, {}),
};

export const SecretsConfigSchema = object(secretsEntries, 'expected a mapping of keys to values');

export type VaultConfig = v.InferOutput<typeof VaultConfigSchema>;
export type SecretsConfig = v.InferOutput<typeof SecretsConfigSchema>;

/** Keys under `secrets.vault` whose values must never be printed. */
export const VAULT_SECRET_KEYS = ['token', 'secretId', 'password'] as const;

/** Overrides the Secrets Manager endpoint (a VPC endpoint, or a test double on loopback). */
export const SECRETS_MANAGER_ENDPOINT_ENV = 'VENDOR_SECRETS_MANAGER_ENDPOINT';
