/**
 * The chart's values.schema.json: it is what `npm run config:schema` writes, and a JSON Schema
 * validator (as Helm runs one at install and upgrade) accepts the chart's values with a driver address
 * and refuses a forgotten driver address, misspelt keys and wrong types, where the agent's own
 * validator refuses the same file or warns about it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseConfig } from '../../agent/config/load.ts';
import { chartValuesSchemaText } from '../../scripts/chart-values-schema.ts';
import { CHART, REQUIRED, ROOT, defaults, merged, type Values } from './helm-chart.ts';
import { jsonSchemaErrors } from './json-schema-validator.ts';

const committed = readFileSync(join(CHART, 'values.schema.json'), 'utf8');
const schema = JSON.parse(committed) as Values;

/** The values Helm validates: the chart's defaults with the user's values over them. */
const values = (overrides: Values) => merged(defaults, merged(REQUIRED, overrides)) as Values;
const account = { name: 'prod-eu', serviceAccount: true };

/** Values the schema must refuse, each with the key its error names. */
const BAD: { what: string; overrides: Values; names: string }[] = [
  { what: 'no driver address', overrides: { config: { driver: { grpc: null } } }, names: "config.driver: 'grpc' is a required property" },
  { what: 'a driver address that is not host:port', overrides: { config: { driver: { grpc: 'https://grpc.vendor.example.com' } } }, names: 'config.driver.grpc:' },
  { what: 'a misspelt key of vendor-agent.yml', overrides: { config: { driver: { grcp: 'x:1' } } }, names: "('grcp' was unexpected)" },
  {
    what: 'an unknown key in a strict section of vendor-agent.yml',
    overrides: { config: { kubernetes: { accounts: [{ ...account, permissions: [{ READ: ['ops'], EXECUTE: ['ops'] }] }] } } },
    names: "config.kubernetes.accounts.0.permissions.0: Additional properties are not allowed ('EXECUTE' was unexpected)",
  },
  { what: 'a port given as a string', overrides: { config: { server: { port: '8082' } } }, names: "config.server.port: '8082' is not of type 'integer'" },
  { what: 'a flag given as a string', overrides: { config: { prometheus: { enabled: 'yes' } } }, names: "config.prometheus.enabled: 'yes' is not of type 'boolean'" },
  { what: 'an unknown log level', overrides: { config: { logging: { level: 'verbose' } } }, names: 'config.logging.level:' },
  { what: 'replicaCount as a string', overrides: { replicaCount: '2' }, names: "replicaCount: '2' is not of type 'integer'" },
  { what: 'an RBAC mode the chart has not', overrides: { rbac: { mode: 'everything' } }, names: 'rbac.mode:' },
  { what: 'a misspelt top-level value', overrides: { replicacount: 3 }, names: "('replicacount' was unexpected)" },
];

describe('deploy/helm/vendor-agent/values.schema.json', () => {
  it('is what `npm run config:schema` writes', () => {
    expect(committed).toBe(chartValuesSchemaText());
  });

  it('types every value of values.yaml', () => {
    const properties = schema.properties as Values;
    expect(Object.keys(defaults).filter((key) => !(key in properties))).toEqual([]);
  });

  it('requires the driver address and gives it no default', () => {
    const driver = (schema.properties as { config: { properties: { driver: { required: string[]; properties: { grpc: Values } } } } }).config.properties.driver;
    expect(driver.required).toContain('grpc');
    expect(driver.properties.grpc).not.toHaveProperty('default');
  });

  // The agent refuses each of these configurations too, or warns about each misspelt key.
  for (const { what, overrides } of BAD.filter((b) => b.overrides.config !== undefined)) {
    it(`holds, for ${what}, a vendor-agent.yml the agent refuses or warns about`, () => {
      const config = values(overrides).config as Values;
      const result = parseConfig(stringify(config), 'values: config');
      const grpcUnset = (config.driver as Values).grpc === undefined;
      // Without a driver address the agent starts with its default address, which the chart does not want.
      if (grpcUnset) expect(result.config?.driver.grpc).toBe('spin-clouddriver-grpc:9091');
      else expect([...result.problems, ...result.warnings].length, JSON.stringify(result.problems)).toBeGreaterThan(0);
    });
  }
});

describe('values.schema.json against a JSON Schema validator (Ajv, draft 7)', () => {
  it("accepts the chart's values with a driver address and a token, and the values of docs/deploy.md and the chart README", () => {
    const docs = [readFileSync(join(ROOT, 'docs/deploy.md'), 'utf8'), readFileSync(join(CHART, 'README.md'), 'utf8')];
    const examples = docs.flatMap((doc) => [...doc.matchAll(/```yaml\n(config:[\s\S]*?)```/g)].map((m) => parse(m[1]!) as Values));
    expect(examples.length).toBeGreaterThanOrEqual(2);
    const plainConfig = parse(
      (parse(readFileSync(join(ROOT, 'deploy/agent/base/configmap.yaml'), 'utf8')) as { data: Record<string, string> }).data['vendor-agent.yml']!,
    ) as Values;
    const instances = [
      values({}),
      values({ token: { value: '', existingSecret: 'agent-token' }, rbac: { mode: 'namespaced', namespaces: ['apps'] }, image: { tag: '0.1.0' } }),
      values({ config: plainConfig }),
      ...examples.map((example) => merged(defaults, merged({ token: REQUIRED.token }, example))),
    ];
    expect(jsonSchemaErrors(schema, instances)).toEqual(instances.map(() => []));
  });

  it('refuses a forgotten driver address, misspelt keys and wrong types, naming the key', () => {
    const errors = jsonSchemaErrors(
      schema,
      BAD.map((b) => values(b.overrides)),
    );
    BAD.forEach((bad, i) => {
      expect(errors[i]!.length, bad.what).toBeGreaterThan(0);
      expect(errors[i]!.join('\n'), bad.what).toContain(bad.names);
    });
  });
});
