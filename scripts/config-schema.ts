import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configJsonSchemaText } from '../agent/config/json-schema.ts';
import { chartValuesSchemaText } from './chart-values-schema.ts';

/**
 * Writes docs/vendor-agent.schema.json from the valibot schema of vendor-agent.yml, and the Helm
 * chart's values.schema.json, whose `config` is that file.
 */
const targets = {
  '../docs/vendor-agent.schema.json': configJsonSchemaText(),
  '../deploy/helm/vendor-agent/values.schema.json': chartValuesSchemaText(),
};
for (const [path, text] of Object.entries(targets)) {
  const target = fileURLToPath(new URL(path, import.meta.url));
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
