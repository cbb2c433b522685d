import { toJsonSchema } from '@valibot/to-json-schema';
import { agentConfigSchema } from './schema.ts';

/**
 * The JSON Schema of `vendor-agent.yml` for editors, derived from the valibot schema. It describes the
 * file as written (input types, defaults, allowed values); rules between keys are checked by the agent
 * only (`npm run agent -- validate <file>`), since JSON Schema cannot say them as clearly.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = toJsonSchema(agentConfigSchema, {
    typeMode: 'input',
    errorMode: 'throw',
    ignoreActions: ['check', 'partial_check', 'raw_check'],
  });
  const { $schema, ...rest } = schema;
  return { $schema, title: 'vendor-agent.yml', ...rest };
}

export function configJsonSchemaText(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}
