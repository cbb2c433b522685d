export { createSecretResolver, DEFAULT_SECRET_CACHE_TTL_MS, type SecretResolver, type SecretResolverOptions } from './resolver.ts';
export {
  SecretsConfigSchema,
  VaultConfigSchema,
  VAULT_AUTH_METHODS,
  VAULT_SECRET_KEYS,
  SECRETS_MANAGER_ENDPOINT_ENV,
  type SecretsConfig,
  type VaultAuthMethod,
  type VaultConfig,
} from './config.ts';
export type { SecretsManagerOptions } from './secrets-manager.ts';
export type { S3SecretOptions } from './s3.ts';
