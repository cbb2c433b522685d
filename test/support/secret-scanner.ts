import { isVendorError, type VendorError } from '../../shared/errors.ts';

/**
 * Finds secret values in text a test collected: response bodies and headers, log lines, error
 * messages. Each secret is looked for as given and in the encodings it could travel in: inside a
 * JSON string, percent-encoded, base64 and base64url (a kubeconfig in a Kubernetes secret, a key
 * in a JWK). Multi-line secrets (kubeconfig contents, PEM keys) are also looked for line by line, so
 * one line of a leaked key is found even when the rest was cut off.
 *
 *   const scanner = secretScanner({ 'admin token': TEST_ADMIN_TOKEN, ...await issuer.privateParts() });
 *   scanner.check(text)                    // [] when clean, else one finding per secret and form
 *   scanner.assertClean(text, 'GET /x')    // throws naming the secret and form, never the value
 *
 * Secrets shorter than 12 characters are refused: they would match by chance. Base64 is matched for
 * the secret encoded on its own (a value in a Kubernetes secret, a header); a secret base64-encoded
 * in the middle of other bytes encodes differently and is not found.
 */

export interface SecretFinding {
  /** The name the secret was given. */
  secret: string;
  /** How it was found: `raw`, `json`, `percent`, `base64`, `base64url`, `line`. */
  form: string;
}

export interface SecretScanner {
  check(text: string): SecretFinding[];
  /** Throws when `text` holds any secret; the message names the secret and `where`, not the value. */
  assertClean(text: string, where: string): void;
  /** Adds secrets learnt later (a token minted during the run). */
  add(secrets: Record<string, string>): void;
}

const MIN_SECRET_LENGTH = 12;
/** Lines of a multi-line secret shorter than this (`-----END...`, `kind: Config`) are too common to look for. */
const MIN_LINE_LENGTH = 24;

function formsOf(value: string): [string, string][] {
  const forms: [string, string][] = [
    ['raw', value],
    ['json', JSON.stringify(value).slice(1, -1)],
    ['percent', encodeURIComponent(value)],
    ['base64', Buffer.from(value, 'utf8').toString('base64')],
    ['base64url', Buffer.from(value, 'utf8').toString('base64url')],
  ];
  if (value.includes('\n')) {
    for (const line of value.split('\n').map((l) => l.trim())) {
      // PEM armour (`-----BEGIN PRIVATE KEY-----`) is the same for every key: only the key's own lines count.
      if (line.length >= MIN_LINE_LENGTH && !line.startsWith('-----')) forms.push(['line', line]);
    }
  }
  // An encoding equal to the value adds nothing; base64 of a long value is checked without its padding.
  const seen = new Set<string>();
  return forms
    .map(([form, text]): [string, string] => [form, form.startsWith('base64') ? text.replace(/=+$/, '') : text])
    .filter(([, text]) => (seen.has(text) ? false : (seen.add(text), true)));
}

export function secretScanner(initial: Record<string, string> = {}): SecretScanner {
  const patterns: { secret: string; form: string; text: string }[] = [];
  const scanner: SecretScanner = {
    add(secrets) {
      for (const [secret, value] of Object.entries(secrets)) {
        if (value.length < MIN_SECRET_LENGTH) throw new Error(`secret "${secret}" is too short to look for (${value.length} characters)`);
        for (const [form, text] of formsOf(value)) patterns.push({ secret, form, text });
      }
    },
    check(text) {
      const found = new Map<string, SecretFinding>();
      for (const p of patterns) {
        if (text.includes(p.text)) found.set(`${p.secret}\u0000${p.form}`, { secret: p.secret, form: p.form });
      }
      return [...found.values()];
    },
    assertClean(text, where) {
      const findings = scanner.check(text);
      if (findings.length > 0) {
        throw new Error(`secret found in ${where}: ${findings.map((f) => `${f.secret} (${f.form})`).join(', ')}`);
      }
    },
  };
  scanner.add(initial);
  return scanner;
}

/** The secret values found in `text`, for an assertion that it is empty. */
export function leakedSecrets(text: string, secrets: Iterable<string>): string[] {
  return [...secrets].filter((s) => s !== '' && text.includes(s));
}

/**
 * The VendorError a promise rejects with, after checking that neither its message nor its details
 * carry any of `secrets`.
 */
export async function secretFailure(promise: Promise<unknown>, secrets: Iterable<string>): Promise<VendorError> {
  try {
    await promise;
  } catch (e) {
    if (!isVendorError(e)) throw e;
    const leaked = leakedSecrets(`${e.message} ${JSON.stringify(e.details)}`, secrets);
    if (leaked.length > 0) throw new Error(`an error carried ${leaked.length} secret value(s)`);
    return e;
  }
  throw new Error('expected the promise to fail');
}
