import { VendorError } from '../errors.ts';
import { isSecretEngineName, SECRET_ENGINE_NAMES, SECRET_ENGINES, type SecretEngineName } from './engines.ts';

/**
 * Secret references: `encrypted:<engine>!k1:v1!k2:v2` stands for the secret's value,
 * `encryptedFile:<engine>!k1:v1...` for the path of a private file holding it. Any other string is a
 * plain value. Problems are reported by position and key name only: a string that merely looks
 * like a reference may be a secret typed into the wrong place, so its parts are never echoed.
 */
export type SecretForm = 'encrypted' | 'encryptedFile';

export interface SecretReference {
  readonly form: SecretForm;
  readonly engine: SecretEngineName;
  readonly params: Readonly<Record<string, string>>;
}

export type SecretValueInspection =
  | { readonly kind: 'plain' }
  | { readonly kind: 'reference'; readonly reference: SecretReference }
  | { readonly kind: 'invalid'; readonly form: SecretForm; readonly engine?: SecretEngineName; readonly problems: readonly string[] };

/** The one form/setting mismatch: a file reference where a string is expected. */
export const FILE_REFERENCE_MISPLACED = 'encryptedFile: references are allowed only where a file path is expected';

const PREFIXES: readonly (readonly [SecretForm, string])[] = [
  ['encrypted', 'encrypted:'],
  ['encryptedFile', 'encryptedFile:'],
];

export function secretFormOf(text: string): SecretForm | undefined {
  return PREFIXES.find(([, prefix]) => text.startsWith(prefix))?.[0];
}

/** Classifies a configured string as plain, a well-formed reference, or a malformed one with every problem. */
export function inspectSecretValue(text: string): SecretValueInspection {
  const form = secretFormOf(text);
  if (form === undefined) return { kind: 'plain' };
  const [engineName = '', ...pairs] = text.slice(form.length + 1).split('!');
  if (!isSecretEngineName(engineName)) {
    const problem = engineName === '' ? 'the engine name is missing' : 'the engine is not known';
    return { kind: 'invalid', form, problems: [`${problem} (expected one of: ${SECRET_ENGINE_NAMES.join(', ')})`] };
  }
  const spec = SECRET_ENGINES[engineName].params as Record<string, { required: boolean; meaning: string; rule?: (v: string) => string | undefined }>;
  const problems: string[] = [];
  const params: Record<string, string> = {};
  pairs.forEach((pair, index) => {
    const at = `pair ${index + 1}`;
    const colon = pair.indexOf(':');
    if (colon < 0) {
      problems.push(`${at} is not of the form key:value`);
      return;
    }
    const key = pair.slice(0, colon);
    const value = pair.slice(colon + 1);
    if (!Object.hasOwn(spec, key)) {
      problems.push(`${at} has a key that engine ${engineName} does not take (allowed: ${Object.keys(spec).join(', ')})`);
    } else if (Object.hasOwn(params, key)) {
      problems.push(`key "${key}" is given more than once`);
    } else if (value === '') {
      problems.push(`key "${key}" (${spec[key]?.meaning}) is empty`);
    } else {
      const problem = spec[key]?.rule?.(value);
      if (problem !== undefined) problems.push(`key "${key}" (${spec[key]?.meaning}) ${problem}`);
      params[key] = value;
    }
  });
  for (const [key, { required, meaning }] of Object.entries(spec)) {
    if (required && !Object.hasOwn(params, key) && !problems.some((p) => p.startsWith(`key "${key}"`))) {
      problems.push(`key "${key}" (${meaning}) is missing`);
    }
  }
  if (problems.length > 0) return { kind: 'invalid', form, engine: engineName, problems };
  return { kind: 'reference', reference: { form, engine: engineName, params } };
}

/** One sentence naming the form, the engine when known, and every problem of a malformed reference. */
export function describeInvalidReference(inspection: Extract<SecretValueInspection, { kind: 'invalid' }>): string {
  const what = inspection.engine === undefined ? `${inspection.form} reference` : `${inspection.form} reference to engine ${inspection.engine}`;
  return `invalid ${what}: ${inspection.problems.join('; ')}`;
}

/**
 * The reference a string holds, or undefined for a plain value.
 * @throws VendorError `invalid_input` naming every problem of a malformed reference.
 */
export function parseSecretReference(text: string): SecretReference | undefined {
  const inspection = inspectSecretValue(text);
  if (inspection.kind === 'plain') return undefined;
  if (inspection.kind === 'reference') return inspection.reference;
  throw new VendorError('invalid_input', describeInvalidReference(inspection), {
    issues: inspection.problems.map((message) => ({ path: '', message })),
    details: inspection.engine === undefined ? { form: inspection.form } : { form: inspection.form, engine: inspection.engine },
  });
}

/**
 * The canonical text of a reference, keys in the engine's order. It names where a secret lives,
 * never what it is, so it is the label used in logs and error messages.
 */
export function formatSecretReference(reference: SecretReference): string {
  const order = Object.keys(SECRET_ENGINES[reference.engine].params);
  const keys = Object.keys(reference.params).sort((a, b) => order.indexOf(a) - order.indexOf(b));
  const text = [`${reference.form}:${reference.engine}`, ...keys.map((k) => `${k}:${reference.params[k] ?? ''}`)].join('!');
  const reparsed = inspectSecretValue(text);
  if (reparsed.kind !== 'reference') {
    throw new VendorError('invalid_input', reparsed.kind === 'invalid' ? describeInvalidReference(reparsed) : 'not a secret reference');
  }
  return text;
}
