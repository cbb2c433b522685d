import * as v from 'valibot';
import { duplicateNameIssues } from '../../accounts/duplicates.ts';
import { accountSettingsSchema, type AccountSettings } from '../../accounts/settings.ts';
import { parseOrThrow } from '../../accounts/validate.ts';
import { VendorError } from '../../errors.ts';
import type { TableRef } from '../core/client.ts';
import { syncSource, type SyncResult } from './sync.ts';

/**
 * A source of driver-defined accounts added in code: the config file, a config server, or a plugin
 * (a `CredentialsDefinitionSource` with an optional numeric precedence; lower wins, the agent is 1000).
 */
export interface DefinitionSource {
  id: string;
  kind: 'driver-config' | 'config-server' | 'plugin';
  precedence?: number;
  load(): Promise<readonly AccountSettings[]>;
}

/** Loads every source and syncs each into the table. A source that fails to load changes nothing of its own. */
export async function syncDefinitionSources(
  t: TableRef,
  sources: readonly DefinitionSource[],
  now: number,
): Promise<Record<string, SyncResult>> {
  const results: Record<string, SyncResult> = {};
  for (const source of sources) {
    const accounts = parseOrThrow(v.array(accountSettingsSchema), await source.load(), `accounts of source ${source.id}`);
    const duplicates = duplicateNameIssues(accounts, source.id);
    if (duplicates.length > 0) {
      throw new VendorError('invalid_input', `source ${source.id} defines a name twice`, { issues: duplicates });
    }
    const { load: _load, ...ref } = source;
    results[source.id] = await syncSource(t, ref, accounts, now);
  }
  return results;
}
