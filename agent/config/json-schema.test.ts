import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configJsonSchema, configJsonSchemaText } from './json-schema.ts';
import { keyPaths } from '../../shared/config-report/keys.ts';
import { agentConfigSchema } from './schema.ts';

describe('JSON Schema of vendor-agent.yml', () => {
  it('the committed docs/vendor-agent.schema.json is what `npm run config:schema` generates', () => {
    const committed = readFileSync(new URL('../../docs/vendor-agent.schema.json', import.meta.url), 'utf8');
    expect(committed).toBe(configJsonSchemaText());
  });

  it('carries types, defaults and allowed values for editors', () => {
    const schema = configJsonSchema() as { properties: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    expect(schema.properties['driver']!.properties['grpc']).toMatchObject({ type: 'string', default: 'spin-clouddriver-grpc:9091' });
    expect(schema.properties['logging']!.properties['format']).toMatchObject({ enum: ['text', 'json'], default: 'text' });
    const level = schema.properties['logging']!.properties['level'] as { pattern: string; default: string };
    expect(level.default).toBe('INFO');
    for (const ok of ['info', 'INFO', 'Warning', 'panic']) expect(new RegExp(level.pattern).test(ok)).toBe(true);
    expect(new RegExp(level.pattern).test('verbose')).toBe(false);
    expect(schema.properties['prometheus']!.properties['port']).toMatchObject({ type: 'integer', default: 8008, maximum: 65535 });
  });
});

describe('docs/agent-config.md', () => {
  it('documents every key of the schema', () => {
    const doc = readFileSync(new URL('../../docs/agent-config.md', import.meta.url), 'utf8');
    const missing = keyPaths(agentConfigSchema).filter((key) => !doc.includes(`| \`${key}\` |`));
    expect(missing).toEqual([]);
  });
});
