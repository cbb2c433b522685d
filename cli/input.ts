/** Files given with `-f`: YAML or JSON (JSON is YAML), read as written. */
import { parseAllDocuments } from 'yaml';
import { yamlValue } from '../shared/yaml-value.ts';
import { usageError } from './errors.ts';

/** Every document of a YAML (or JSON) text, empty ones left out; a syntax error is a usage error naming its line. */
export function documentsOf(text: string, file: string): unknown[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    const error = doc.errors[0];
    if (error !== undefined) {
      const pos = error.linePos?.[0];
      throw usageError(`${file} is not valid YAML or JSON${pos === undefined ? '' : ` (line ${pos.line}, column ${pos.col})`}: ${error.message.split('\n')[0]}`);
    }
  }
  return list
    .map((d, i) => {
      const read = yamlValue(d);
      if ('problem' in read) throw usageError(`${file}: document ${i + 1} cannot be read: ${read.problem}`);
      return read.value;
    })
    .filter((d) => d !== null && d !== undefined);
}
