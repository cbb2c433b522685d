/**
 * The secret engines a reference may name, and the keys each engine takes. Shared by the API, which
 * stores references and must reject a malformed one before it reaches an agent, and by the agent,
 * which resolves them. A rule returns a problem sentence, or undefined when the value is acceptable;
 * the sentence never repeats the value, so it can go into an error message as it is.
 */
export interface SecretParamSpec {
  readonly required: boolean;
  readonly meaning: string;
  readonly rule?: (value: string) => string | undefined;
}

export interface SecretEngineSpec {
  /** Keys in the order a formatted reference lists them. */
  readonly params: Readonly<Record<string, SecretParamSpec>>;
}

const boolean = (value: string): string | undefined =>
  value === 'true' || value === 'false' ? undefined : 'must be true or false';

// Vault mounts and paths are slash-separated segments; `..` or empty segments would address a
// different secret than the one written, so they are refused rather than normalised.
const vaultPath = (value: string): string | undefined => {
  const segments = value.replace(/^\/+|\/+$/g, '').split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return 'must be a path without empty, "." or ".." segments';
  if (/[\s?#%]/.test(value)) return 'must not contain whitespace, "?", "#" or "%"';
  return undefined;
};

export const awsRegion = (value: string): string | undefined =>
  /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/.test(value) ? undefined : 'must be an AWS region such as us-east-1';

// Secrets Manager names allow letters, digits and /_+=.@- (up to 512); an ARN adds ':'.
const secretsManagerId = (value: string): string | undefined =>
  /^[A-Za-z0-9/_+=.@:-]{1,2048}$/.test(value)
    ? undefined
    : 'must be a secret name or ARN (letters, digits and /_+=.@-:)';

// S3 bucket names: 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit.
export const s3Bucket = (value: string): string | undefined =>
  /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(value) ? undefined : 'must be an S3 bucket name (3 to 63 lower-case letters, digits, "." and "-")';

export const SECRET_ENGINES = {
  vault: {
    params: {
      e: { required: true, meaning: 'mount path of the KV secrets engine', rule: vaultPath },
      p: { required: true, meaning: 'path of the secret inside the mount', rule: vaultPath },
      k: { required: true, meaning: 'key inside the secret' },
      v: {
        required: false,
        meaning: 'KV version of the mount, 1 or 2 (detected when absent)',
        rule: (value) => (value === '1' || value === '2' ? undefined : 'must be 1 or 2'),
      },
      b: { required: false, meaning: 'true when the stored value is base64 encoded', rule: boolean },
    },
  },
  'secrets-manager': {
    params: {
      r: { required: true, meaning: 'AWS region of the secret', rule: awsRegion },
      s: { required: true, meaning: 'name or ARN of the secret', rule: secretsManagerId },
      k: { required: false, meaning: 'key inside a secret stored as a JSON object' },
      b: { required: false, meaning: 'true when the stored value is base64 encoded', rule: boolean },
    },
  },
  s3: {
    params: {
      r: { required: true, meaning: 'AWS region of the bucket', rule: awsRegion },
      b: { required: true, meaning: 'bucket name', rule: s3Bucket },
      f: { required: true, meaning: 'key of the object in the bucket' },
      k: { required: false, meaning: 'key inside an object holding a YAML or JSON mapping; the whole object when absent' },
    },
  },
} as const satisfies Record<string, SecretEngineSpec>;

export type SecretEngineName = keyof typeof SECRET_ENGINES;

export const SECRET_ENGINE_NAMES = Object.keys(SECRET_ENGINES) as SecretEngineName[];

export function isSecretEngineName(name: string): name is SecretEngineName {
  return Object.hasOwn(SECRET_ENGINES, name);
}
