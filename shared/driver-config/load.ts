import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type * as v from 'valibot';
import { parseDocument } from 'yaml';
import { VendorError } from '../errors.ts';
import { yamlValue } from '../yaml-value.ts';
import { duplicateNameIssues } from '../accounts/duplicates.ts';
import { parseOrThrow } from '../accounts/validate.ts';
import { driverConfigSchema, type DriverConfig } from './schema.ts';

export const DEFAULT_DRIVER_CONFIG = 'vendor-driver.yml';
export const EXAMPLE_DRIVER_CONFIG = 'vendor-driver.example.yml';

/**
 * Which file to read: `VENDOR_DRIVER_CONFIG` when set (it must exist), else `./vendor-driver.yml`,
 * else the committed, commented `vendor-driver.example.yml`.
 */
export function resolveDriverConfigPath(env: NodeJS.ProcessEnv, cwd: string): string {
  const configured = env.VENDOR_DRIVER_CONFIG;
  if (configured !== undefined && configured !== '') return resolve(cwd, configured);
  const local = resolve(cwd, DEFAULT_DRIVER_CONFIG);
  return existsSync(local) ? local : resolve(cwd, EXAMPLE_DRIVER_CONFIG);
}

/**
 * The YAML (or JSON) text as plain data; empty text is `{}`. Errors name the problem and its position
 * but never quote the text, which may hold a secret.
 */
export function parseYamlText(text: string, file: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // The first line names the problem and its position; the code frame after it would quote the text.
    const messages = doc.errors.map((e) => (e.message.split('\n')[0] ?? e.code).replace(/:$/, ''));
    throw new VendorError('invalid_input', `${file} is not valid YAML: ${messages.join('; ')}`, {
      issues: messages.map((message) => ({ path: '(yaml)', message })),
    });
  }
  const read = yamlValue(doc);
  if ('problem' in read) throw new VendorError('invalid_input', `${file} is not valid YAML: ${read.problem}`, { issues: [{ path: '(yaml)', message: read.problem }] });
  return read.value ?? {};
}

/**
 * Parses and validates the file's text. Errors name the file, the key path (`kubernetes.accounts[1].name`),
 * and what is allowed; nothing of a bad file is used.
 */
export function parseDriverConfig<TSchema extends v.GenericSchema<unknown, DriverConfig> = typeof driverConfigSchema>(
  text: string,
  file: string,
  schema?: TSchema,
): v.InferOutput<TSchema> {
  const raw = parseYamlText(text, file);
  const config = parseOrThrow(schema ?? driverConfigSchema, raw, file) as v.InferOutput<TSchema>;
  const duplicates = duplicateNameIssues((config as DriverConfig).kubernetes.accounts, 'kubernetes.accounts');
  if (duplicates.length > 0) {
    throw new VendorError('invalid_input', `${file} is invalid: ${duplicates.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
      issues: duplicates,
    });
  }
  return config;
}
