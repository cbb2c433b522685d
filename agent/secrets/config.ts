import * as v from 'valibot';

/**
 * The `secrets` section of vendor-agent.yml. SPEC.md leaves the inner keys of `secrets.vault` open;
 * these are the ones we chose (docs/secrets.md). Credentials here (token, secretId, password) are
 * secret-bearing keys: a configuration report must redact their values.
 */
export const VAULT_AUTH_METHODS = ['TOKEN', 'KUBERNETES', 'APPROLE', 'USERPASS'] as const;
export type VaultAuthMethod = (typeof VAULT_AUTH_METHODS)[number];

export const DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const DEFAULT_AUTH_MOUNTS: Readonly<Record<Exclude<VaultAuthMethod, 'TOKEN'>, string>> = {
  KUBERNETES: 'kubernetes',
  APPROLE: 'approle',
  USERPASS: 'userpass',
};

const URL_MESSAGE = 'must be an http or https URL such as https://vault.example:8200';
function isHttpUrl(text: string): boolean {
  return URL.canParse(text) && /^https?:$/.test(new URL(text).protocol);
}

const nonEmpty = v.pipe(v.string(), v.nonEmpty('must not be empty'));
const positiveInteger = v.pipe(v.number(), v.integer(), v.minValue(1));

const authMethod = v.pipe(
  v.string(),
  v.transform((s) => s.toUpperCase()),
  v.picklist(VAULT_AUTH_METHODS, `must be one of ${VAULT_AUTH_METHODS.join(', ')} (any case)`),
);

const VaultTlsSchema = v.object({
  /** PEM file of the CA that signed Vault's certificate; the system trust store when absent. */
  caCertFile: v.optional(nonEmpty),
  insecureSkipVerify: v.optional(v.boolean(), false),
  serverName: v.optional(nonEmpty),
  clientCertFile: v.optional(nonEmpty),
  clientKeyFile: v.optional(nonEmpty),
});

const REQUIRED_WHEN_ENABLED: readonly (readonly ['url' | 'role' | 'roleId' | 'secretId' | 'username' | 'password', VaultAuthMethod | 'always'])[] = [
  ['url', 'always'],
  ['role', 'KUBERNETES'],
  ['roleId', 'APPROLE'],
  ['secretId', 'APPROLE'],
  ['username', 'USERPASS'],
  ['password', 'USERPASS'],
];

export const VaultConfigSchema = v.pipe(
  v.object({
    enabled: v.optional(v.boolean(), false),
    url: v.optional(v.pipe(v.string(), v.check(isHttpUrl, URL_MESSAGE))),
    authMethod: v.optional(authMethod, 'TOKEN'),
    /** TOKEN: the token; the VAULT_TOKEN environment variable when absent. */
    token: v.optional(nonEmpty),
    /** KUBERNETES: the Vault role to log in as. */
    role: v.optional(nonEmpty),
    /** Mount path of the auth method; defaults to kubernetes, approle or userpass. */
    path: v.optional(nonEmpty),
    serviceAccountTokenFile: v.optional(nonEmpty, DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE),
    roleId: v.optional(nonEmpty),
    secretId: v.optional(nonEmpty),
    username: v.optional(nonEmpty),
    password: v.optional(nonEmpty),
    /** USERPASS: mount path of the userpass method, kept for configurations written for it; `path` works too. */
    userAuthPath: v.optional(nonEmpty),
    namespace: v.optional(nonEmpty),
    timeoutMs: v.optional(positiveInteger, 10_000),
    tls: v.optional(VaultTlsSchema, {}),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed || !dataset.value.enabled) return;
    const config = dataset.value;
    for (const [key, when] of REQUIRED_WHEN_ENABLED) {
      if (config[key] !== undefined || (when !== 'always' && when !== config.authMethod)) continue;
      addIssue({
        message: when === 'always' ? 'is required when secrets.vault.enabled is true' : `is required when authMethod is ${when}`,
        path: [{ type: 'object', origin: 'value', input: config, key, value: undefined }],
      });
    }
  }),
);

export const SecretsConfigSchema = v.object({
  vault: v.optional(VaultConfigSchema, {}),
});

export type VaultConfig = v.InferOutput<typeof VaultConfigSchema>;
export type SecretsConfig = v.InferOutput<typeof SecretsConfigSchema>;

/** Keys under `secrets.vault` whose values must never be printed. */
export const VAULT_SECRET_KEYS = ['token', 'secretId', 'password'] as const;

/** Overrides the Secrets Manager endpoint (a VPC endpoint, or a test double on loopback). */
export const SECRETS_MANAGER_ENDPOINT_ENV = 'VENDOR_SECRETS_MANAGER_ENDPOINT';
