import type { DefinitionSource } from '../table/sources/definition-sources.ts';
import type { DriverConfig } from './schema.ts';

/** The driver config file's `kubernetes.accounts[]` as a definition source. */
export function driverConfigSource(config: DriverConfig): DefinitionSource {
  return { id: 'driver-config', kind: 'driver-config', load: async () => config.kubernetes.accounts };
}
