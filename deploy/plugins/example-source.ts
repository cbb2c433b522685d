/**
 * An example definition-source plugin (docs/deploy.md#plugins): the accounts listed under `accounts`
 * in a YAML or JSON file, which `options.file` of the plugin's entry in `vendor-driver.yml` names.
 *
 *   sources:
 *     plugins:
 *       - path: ../plugins/example-source.ts   # relative to vendor-driver.yml
 *         precedence: 500                      # beats an agent's own definition (1000)
 *         options: { file: /etc/vendor/plugin-accounts.yml }
 *
 * The driver calls the default export every `sources.refreshIntervalMs` and validates what it returns
 * as `kubernetes.accounts[]`. A plugin reports a problem by throwing: the driver logs a VendorError's
 * message (so it must not hold a secret), names any other error by its type only, and keeps the
 * accounts the plugin returned last.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import type { PluginContext } from '../../driver/sources/plugins.ts';
import { VendorError } from '../../shared/errors.ts';

export default async function exampleSource({ options }: PluginContext): Promise<unknown> {
  const file = options.file;
  if (typeof file !== 'string' || file === '') throw new VendorError('invalid_input', 'options.file must name a YAML or JSON file of accounts');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new VendorError('unavailable', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  let document: unknown;
  try {
    document = parse(text);
  } catch {
    // The parser's message quotes the text it stopped at.
    throw new VendorError('invalid_input', `${file} is not valid YAML`);
  }
  const accounts = (document as { accounts?: unknown } | null)?.accounts;
  if (!Array.isArray(accounts)) throw new VendorError('invalid_input', `${file} has no list under accounts`);
  return accounts;
}
