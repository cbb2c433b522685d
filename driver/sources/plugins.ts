import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isVendorError, VendorError } from '../../shared/errors.ts';
import { pluginName, type PluginEntry } from '../../shared/driver-config/sources.ts';
import type { AccountSettings } from '../../shared/accounts/settings.ts';
import type { DefinitionSource } from '../../shared/table/sources/definition-sources.ts';

/**
 * What a plugin module gets each time its definitions are read: the `options` of its entry in
 * `vendor-driver.yml`, as written there.
 */
export interface PluginContext {
  readonly options: Readonly<Record<string, unknown>>;
}

/**
 * A plugin: an ES module whose default export returns (or resolves to) a list of accounts in the form
 * of `kubernetes.accounts[]` of `vendor-driver.yml`. The driver validates what it returns.
 */
export type PluginFunction = (context: PluginContext) => unknown;

export type ModuleImport = (url: string) => Promise<unknown>;

const importModule: ModuleImport = (url) => import(url);

/**
 * A plugin entry as a definition source, `plugin:<name>` with the entry's precedence. The module is
 * imported at its first read (a failed import is tried again at the next); each read calls its function.
 */
export function pluginSource(entry: PluginEntry, baseDir: string, load: ModuleImport = importModule): DefinitionSource {
  const name = pluginName(entry);
  const path = resolve(baseDir, entry.path);
  let loaded: Promise<PluginFunction> | undefined;
  const plugin = () =>
    (loaded ??= load(pathToFileURL(path).href).then(
      (module) => {
        const found = (module as { default?: unknown }).default;
        if (typeof found !== 'function') throw new VendorError('invalid_input', `plugin ${name} (${path}) has no default export that is a function`);
        return found as PluginFunction;
      },
      (e: unknown) => {
        throw new VendorError('invalid_input', `plugin ${name} cannot be loaded from ${path}: ${reasonOf(e)}`);
      },
    )).catch((e: unknown) => {
      loaded = undefined;
      throw e;
    });
  return {
    id: `plugin:${name}`,
    kind: 'plugin',
    ...(entry.precedence === undefined ? {} : { precedence: entry.precedence }),
    async load() {
      const definitions = await plugin();
      try {
        // Whatever it returned is validated by the sync (syncDefinitionSources) before any of it is used.
        return (await definitions({ options: entry.options })) as readonly AccountSettings[];
      } catch (e) {
        throw new VendorError(isVendorError(e) ? e.code : 'unavailable', `plugin ${name} failed: ${reasonOf(e)}`);
      }
    },
  };
}

// A plugin's own errors may quote what it read; only a VendorError's message is written not to hold a
// secret, so any other error is named by its type and code.
function reasonOf(e: unknown): string {
  if (isVendorError(e)) return e.message;
  const code = (e as { code?: unknown } | null)?.code;
  return `${e instanceof Error ? e.name : typeof e}${typeof code === 'string' ? ` (${code})` : ''}`;
}
