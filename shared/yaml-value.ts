/**
 * A parsed YAML document as plain data. A document can parse without errors and still fail here: an
 * alias that names no anchor before it, or aliases that would copy anchors more often than
 * `maxAliasCount` allows (a document that grows without bound as it is read). The `yaml` package
 * throws for both; every reader of YAML that comes from outside (an operation's manifests, the
 * driver's config file, the config checks, `vendorctl -f`) turns that into a problem of its own
 * rather than an unexpected error. The problem never quotes the text, which may hold a secret.
 */
import type { Document } from 'yaml';

/** The bound on alias expansion used wherever a reader does not set its own. */
export const MAX_YAML_ALIAS_COUNT = 100;

export function yamlValue(doc: Pick<Document, 'toJS'>, maxAliasCount: number = MAX_YAML_ALIAS_COUNT): { value: unknown } | { problem: string } {
  try {
    return { value: doc.toJS({ maxAliasCount }) };
  } catch (err) {
    const message = err instanceof Error ? err.message : '';
    if (message.startsWith('Unresolved alias')) return { problem: 'an alias names no anchor set before it' };
    if (message.includes('alias count')) return { problem: `its aliases expand to more than ${maxAliasCount} nodes` };
    return { problem: 'it cannot be read as data' };
  }
}
