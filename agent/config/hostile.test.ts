/**
 * Random and mutated vendor-agent.yml documents: whatever the file holds, parsing ends with either a
 * configuration or a complete list of problems (each with a key path and what is allowed), never an
 * exception, and a secret planted in the file never appears in a problem or a warning. fast-check
 * prints the seed and the shrunk document of a failure, so a failing run can be replayed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig, type ConfigResult } from './load.ts';

const SECRET = 'pl4nted-s3cret-value-9f2c';

/** A file that uses most sections, with the planted secret in every secret-bearing key. */
const VALID: Record<string, unknown> = {
  driver: {
    grpc: 'driver.example.com:443',
    auth: { token: SECRET },
    keepAliveHeartbeatSeconds: 30,
    tls: { serverName: 'driver', clientCertFile: '/tls/c.pem', clientKeyFile: '/tls/k.pem', clientKeyFilePassword: SECRET },
    responseRetries: { maxRetries: 10, backOffMs: 100 },
  },
  kubernetes: {
    reconnectTimeoutMs: 1000,
    retries: { maxRetries: 2, retryableErrors: ['timeout'] },
    accounts: [
      {
        name: 'prod',
        kubeConfigFile: '/kube/prod',
        context: 'prod',
        namespaces: ['apps'],
        kinds: ['deployment'],
        customResourceDefinitions: [{ kind: 'Rollout.argoproj.io', scope: 'Cluster' }],
        permissions: [{ READ: ['dev'] }, { WRITE: ['ops'] }],
      },
      { name: 'local', serviceAccount: true, metrics: true },
    ],
  },
  tasks: { totalBudget: 10, budgetPerAccount: 5 },
  logging: { format: 'json', level: 'debug' },
  server: { host: '0.0.0.0', port: 8082, ssl: { enabled: true, certFile: '/tls/s.pem', keyFile: '/tls/s-key.pem', keyPassword: SECRET } },
  prometheus: { enabled: true },
  secrets: { vault: { enabled: true, url: 'https://vault:8200', authMethod: 'TOKEN', token: SECRET } },
};

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Step = number | string;

/** Every path to a value inside `doc`. */
function pathsOf(doc: Json, at: Step[] = []): Step[][] {
  const here = [at];
  if (Array.isArray(doc)) return [...here, ...doc.flatMap((v, i) => pathsOf(v, [...at, i]))];
  if (doc !== null && typeof doc === 'object') return [...here, ...Object.entries(doc).flatMap(([k, v]) => pathsOf(v, [...at, k]))];
  return here;
}

type Mutation = { kind: 'replace'; value: Json } | { kind: 'delete' } | { kind: 'addKey'; key: string; value: Json };

function mutate(doc: Json, path: Step[], m: Mutation): Json {
  const copy = structuredClone(doc);
  if (path.length === 0) return m.kind === 'replace' ? m.value : copy;
  const parent = path.slice(0, -1).reduce<Json>((node, step) => (node as Record<Step, Json>)[step] as Json, copy);
  const last = path.at(-1)!;
  const holder = parent as Record<Step, Json>;
  if (m.kind === 'replace') holder[last] = m.value;
  else if (m.kind === 'delete') {
    if (Array.isArray(parent) && typeof last === 'number') parent.splice(last, 1);
    else delete holder[last];
  } else {
    const target = holder[last];
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) (target as Record<string, Json>)[m.key] = m.value;
  }
  return copy;
}

const jsonValue: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), value: fc.oneof(jsonValue, fc.constantFrom<Json>(-1, 0, 1.5, 65536, '', ' ', 'a b', 'READ')) }),
  fc.record({ kind: fc.constant('delete' as const) }),
  fc.record({ kind: fc.constant('addKey' as const), key: fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('nmae', 'kinds', 'READ', 'grcp')), value: jsonValue }),
);

/** What must hold for any file. */
function expectWellFormed(result: ConfigResult): void {
  expect(result.config === undefined).toBe(result.problems.length > 0);
  for (const p of result.problems) {
    expect(p.path.length).toBeGreaterThan(0);
    expect(p.message).toMatch(/^expected /);
  }
  const said = JSON.stringify([result.problems, result.warnings]);
  expect(said).not.toContain(SECRET);
}

describe('hostile vendor-agent.yml', () => {
  it('the valid base file is valid', () => {
    const result = parseConfig(stringify(VALID), 'base.yml');
    expect(result.problems).toEqual([]);
  });

  it('mutated files: a configuration or a complete list of problems, never an exception or a leaked secret', () => {
    const paths = pathsOf(VALID as Json);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...paths), mutation), { minLength: 1, maxLength: 4 }), (steps) => {
        let doc = VALID as Json;
        for (const [path, m] of steps) {
          try {
            doc = mutate(doc, path, m);
          } catch {
            // an earlier step removed the parent of this path: nothing to mutate
          }
        }
        expectWellFormed(parseConfig(stringify(doc), 'mutated.yml'));
      }),
      { numRuns: 400 },
    );
  });

  it('arbitrary text: never an exception', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.lorem({ maxCount: 20 })), (text) => {
        expectWellFormed(parseConfig(text, 'random.yml'));
      }),
      { numRuns: 400 },
    );
  });

  it('random YAML documents of any shape: never an exception', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        expectWellFormed(parseConfig(stringify(value), 'shape.yml'));
      }),
      { numRuns: 300 },
    );
  });

  it('an alias bomb is refused as a problem instead of expanding', () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const result = parseConfig(`${levels.join('\n')}\n`, 'bomb.yml');
    expect(result.config).toBeUndefined();
    expect(result.problems.length).toBeGreaterThan(0);
  });
});
