import type * as v from 'valibot';
import { unwrapSchema, type WalkedSchema } from '../../shared/config-report/keys.ts';

/**
 * Every key of the schema as a path, lists of mappings shown with `[]`:
 * `kubernetes.accounts[].customResourceDefinitions[].scope`. A record (open mapping) is one key.
 */
export function keyPaths(schema: v.GenericSchema): string[] {
  const out: string[] = [];
  const walk = (node: WalkedSchema, prefix: string): void => {
    const s = unwrapSchema(node);
    if ((s.type === 'object' || s.type === 'strict_object') && s.entries !== undefined) {
      for (const [key, child] of Object.entries(s.entries)) walk(child, prefix === '' ? key : `${prefix}.${key}`);
    } else if (s.type === 'array' && s.item !== undefined && unwrapSchema(s.item).entries !== undefined) {
      walk(s.item, `${prefix}[]`);
    } else {
      out.push(prefix);
    }
  };
  walk(schema as WalkedSchema, '');
  return out;
}
