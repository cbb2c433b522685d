import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configJsonSchemaText } from '../agent/config/json-schema.ts';

/** Writes docs/vendor-agent.schema.json from the valibot schema of vendor-agent.yml. */
const target = fileURLToPath(new URL('../docs/vendor-agent.schema.json', import.meta.url));
writeFileSync(target, configJsonSchemaText());
console.log(`wrote ${target}`);
