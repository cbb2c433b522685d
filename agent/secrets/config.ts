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

const text = (description: string) => v.pipe(v.string(), v.nonEmpty('must not be empty'), v.description(description));
const flag = (description: string) => v.pipe(v.boolean(), v.description(description));

const authMethod = v.pipe(
  v.string(),
  v.transform((s) => s.toUpperCase()),
  v.picklist(VAULT_AUTH_METHODS, `must be one of ${VAULT_AUTH_METHODS.join(', ')} (any case)`),
  v.description('How the agent logs in to Vault.'),
);

const VaultTlsSchema = v.object({
  caCertFile: v.optional(text("PEM file of the CA that signed Vault's certificate; the system trust store when absent.")),
  insecureSkipVerify: v.optional(flag("Do not verify Vault's certificate."), false),
  serverName: v.optional(text("Name expected on Vault's certificate, instead of the host of url.")),
  clientCertFile: v.optional(text('PEM client certificate presented to Vault.')),
  clientKeyFile: v.optional(text('PEM key of clientCertFile.')),
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
    enabled: v.optional(flag('Resolve vault references.'), false),
    url: v.optional(v.pipe(v.string(), v.check(isHttpUrl, URL_MESSAGE), v.description('Address of Vault, e.g. https://vault.example:8200.'))),
    authMethod: v.optional(authMethod, 'TOKEN'),
    token: v.optional(text('TOKEN: the Vault token; VAULT_TOKEN when absent. Secret.')),
    role: v.optional(text('KUBERNETES: the Vault role to log in as.')),
    path: v.optional(text('Mount path of the auth method; kubernetes, approle or userpass by default.')),
    serviceAccountTokenFile: v.optional(text('KUBERNETES: file of the service account JWT.'), DEFAULT_SERVICE_ACCOUNT_TOKEN_FILE),
    roleId: v.optional(text('APPROLE: the role id.')),
    secretId: v.optional(text('APPROLE: the secret id. Secret.')),
    username: v.optional(text('USERPASS: the user name.')),
    password: v.optional(text('USERPASS: the password. Secret.')),
    userAuthPath: v.optional(text('USERPASS: mount path of the userpass method; wins over path.')),
    namespace: v.optional(text('Vault Enterprise namespace, sent as X-Vault-Namespace.')),
    timeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.description('Time allowed for each request to Vault, in milliseconds.')), 10_000),
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
