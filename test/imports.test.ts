import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEPLOYED } from '../infra/control-plane.ts';
import { checkImports, readTree, type Violation } from './imports.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const tree = (files: Record<string, string>) => new Map(Object.entries(files));
const messages = (violations: readonly Violation[]) => violations.map((v) => v.message);

describe('the import rule on made-up trees', () => {
  it('refuses an area importing another, naming the file, its line and the file imported', () => {
    const report = checkImports(
      tree({
        'agent/main.ts': "import { x } from './x.ts';\nimport { sessionOf } from '../driver/session.ts';\n",
        'agent/x.ts': 'export const x = 1;\n',
        'driver/session.ts': 'export const sessionOf = 1;\n',
      }),
    );
    expect(report.violations).toEqual([
      expect.objectContaining({ kind: 'boundary', file: 'agent/main.ts', line: 2, imported: 'driver/session.ts' }),
    ]);
    expect(report.violations[0]!.message).toMatch(/^agent\/main\.ts:2 imports driver\/session\.ts: /);
  });

  it('sees export-from, type-only imports, dynamic imports with a literal and import types', () => {
    const report = checkImports(
      tree({
        'functions/a.ts': "export { run } from '../agent/run.ts';\n",
        'functions/b.ts': "import type { Session } from '../driver/session.ts';\nexport type S = Session;\n",
        'driver/c.ts': "export async function load() {\n  return await import('../functions/app.ts');\n}\n",
        'driver/d.ts': "export type App = typeof import('../functions/app.ts');\n",
        'agent/e.ts': "export * as sessions from '../driver/session.ts';\n",
        'agent/run.ts': 'export const run = 1;\n',
        'driver/session.ts': 'export type Session = { id: string };\n',
        'functions/app.ts': 'export const app = 1;\n',
      }),
    );
    expect(report.violations.map((v) => [v.file, v.line, v.imported])).toEqual([
      ['agent/e.ts', 1, 'driver/session.ts'],
      ['driver/c.ts', 2, 'functions/app.ts'],
      ['driver/d.ts', 1, 'functions/app.ts'],
      ['functions/a.ts', 1, 'agent/run.ts'],
      ['functions/b.ts', 1, 'driver/session.ts'],
    ]);
  });

  it('refuses shared/ importing any of the areas, even a file that is not TypeScript', () => {
    const report = checkImports(
      tree({
        'shared/errors.ts': "import { routes } from '../functions/routes.ts';\nexport const e = routes;\n",
        'shared/log.ts': "import config from '../agent/defaults.json' with { type: 'json' };\nexport const l = config;\n",
        'shared/clock.ts': "export { driverClock } from '../driver/clock.ts';\n",
        'functions/routes.ts': 'export const routes = 1;\n',
        'driver/clock.ts': 'export const driverClock = 1;\n',
      }),
    );
    expect(report.violations.map((v) => [v.file, v.line, v.imported])).toEqual([
      ['shared/clock.ts', 1, 'driver/clock.ts'],
      ['shared/errors.ts', 1, 'functions/routes.ts'],
      ['shared/log.ts', 1, 'agent/defaults.json'],
    ]);
  });

  it('refuses a worker of another area loaded by URL, the way the agent starts its decoding threads', () => {
    const report = checkImports(
      tree({
        'agent/resources/decoder.ts': "export const w = new URL('../../driver/decode-worker.ts', import.meta.url);\n",
        'driver/decode-worker.ts': 'export {};\n',
      }),
    );
    expect(messages(report.violations)).toEqual([expect.stringMatching(/^agent\/resources\/decoder\.ts:1 loads driver\/decode-worker\.ts: /)]);
  });

  it('lets every area import shared/, and packages and node: modules are no part of the rule', () => {
    const report = checkImports(
      tree({
        'agent/a.ts': "import { e } from '../shared/errors.ts';\nimport pino from 'pino';\nimport { join } from 'node:path';\nexport const a = [e, pino, join];\n",
        'driver/b.ts': "import { e } from '../shared/errors.ts';\nexport const b = e;\n",
        'functions/c.ts': "export { e } from '../shared/errors.ts';\n",
        'shared/errors.ts': "import * as v from 'valibot';\nexport const e = v;\n",
      }),
    );
    expect(report.violations).toEqual([]);
  });

  it('keeps cli/ apart: it imports only shared/ and itself, and nothing imports it', () => {
    const report = checkImports(
      tree({
        'cli/main.ts': "import { run } from './run.ts';\nimport { e } from '../shared/errors.ts';\nimport { view } from '../functions/view.ts';\nexport const m = [run, e, view];\n",
        'cli/run.ts': 'export const run = 1;\n',
        'functions/view.ts': 'export const view = 1;\n',
        'agent/a.ts': "import { run } from '../cli/run.ts';\nexport const a = run;\n",
        'shared/errors.ts': "import { run } from '../cli/run.ts';\nexport const e = run;\n",
      }),
    );
    expect(report.violations.map((v) => [v.file, v.line, v.imported])).toEqual([
      ['agent/a.ts', 1, 'cli/run.ts'],
      ['cli/main.ts', 3, 'functions/view.ts'],
      ['shared/errors.ts', 1, 'cli/run.ts'],
    ]);
    expect(report.violations[1]!.message).toMatch(/cli\/ may import only cli\/ and shared\//);
  });

  it('is not fooled by comments or strings that look like imports', () => {
    const report = checkImports(
      tree({
        'agent/a.ts': [
          "// import { s } from '../driver/session.ts';",
          "/* export * from '../functions/app.ts'; */",
          "export const text = \"import { s } from '../driver/session.ts'\";",
          "export const template = `await import('../functions/app.ts')`;",
          '',
        ].join('\n'),
        'driver/session.ts': 'export const s = 1;\n',
        'functions/app.ts': 'export const app = 1;\n',
      }),
    );
    expect(report.violations).toEqual([]);
  });

  it('lets tests, and files only tests use, import anything, but checks such a file once production uses it', () => {
    const files = {
      'agent/main.ts': "import { a } from './a.ts';\nif (import.meta.main) console.log(a);\n",
      'driver/main.ts': "import { s } from './session.ts';\nif (import.meta.main) console.log(s);\n",
      'functions/node.ts': "import { app } from './app.ts';\nif (import.meta.main) console.log(app);\n",
      'agent/a.ts': 'export const a = 1;\n',
      'agent/a.test.ts': "import { a } from './a.ts';\nimport { s } from '../driver/session.ts';\nimport { help } from './testing.ts';\n",
      'agent/testing.ts': "import { s } from '../driver/session.ts';\nexport const help = s;\n",
      'driver/session.ts': 'export const s = 1;\n',
      'test/support/harness.ts': "import { a } from '../../agent/a.ts';\nimport { s } from '../../driver/session.ts';\nimport { app } from '../../functions/app.ts';\n",
      'functions/app.ts': 'export const app = 1;\n',
    };
    const report = checkImports(tree(files));
    expect(report.violations).toEqual([]);
    expect(report.testOnly).toEqual(['agent/testing.ts']);

    const used = checkImports(tree({ ...files, 'agent/b.ts': "export { help } from './testing.ts';\n" }));
    expect(used.testOnly).toEqual([]);
    expect(used.violations).toEqual([expect.objectContaining({ file: 'agent/testing.ts', line: 1, imported: 'driver/session.ts' })]);
  });

  it('checks a program or a named entry even when only its test imports it', () => {
    const files = {
      'agent/main.ts': "import { s } from '../driver/session.ts';\nif (import.meta.main) console.log(s);\n",
      'agent/main.test.ts': "import './main.ts';\n",
      'functions/lambda.ts': "import { s } from '../driver/session.ts';\nexport const handler = s;\n",
      'functions/lambda.test.ts': "import { handler } from './lambda.ts';\n",
      'driver/session.ts': 'export const s = 1;\n',
    };
    const report = checkImports(tree(files), { entries: ['functions/lambda.ts'] });
    expect(report.violations.map((v) => v.file)).toEqual(['agent/main.ts', 'functions/lambda.ts']);
    expect(report.testOnly).toEqual([]);
  });

  it('reports an import cycle between production files as a path back to its start', () => {
    const report = checkImports(
      tree({
        'driver/a.ts': "import { b } from './b.ts';\nexport const a = b;\n",
        'driver/b.ts': "import type { C } from './c.ts';\nexport const b = 1;\nexport type B = C;\n",
        'driver/c.ts': "import { x } from './x.ts';\n\nimport type { A } from './a.ts';\nexport type C = A;\n",
        'driver/x.ts': 'export const x = 1;\n',
        'shared/self.ts': "export * from './self.ts';\n",
      }),
    );
    expect(report.violations).toEqual([
      expect.objectContaining({ kind: 'cycle', files: ['driver/a.ts', 'driver/b.ts', 'driver/c.ts'], file: 'driver/c.ts', line: 3, imported: 'driver/a.ts' }),
      expect.objectContaining({ kind: 'cycle', files: ['shared/self.ts'], file: 'shared/self.ts', line: 1, imported: 'shared/self.ts' }),
    ]);
    expect(report.violations[0]!.message).toBe('import cycle: driver/a.ts → driver/b.ts → driver/c.ts → driver/a.ts (driver/c.ts:3 imports driver/a.ts)');
  });

  it('reports one cycle for each group of files importing each other, and none among tests', () => {
    const report = checkImports(
      tree({
        'agent/a.ts': "import './b.ts';\nimport './c.ts';\n",
        'agent/b.ts': "import './a.ts';\nimport './c.ts';\n",
        'agent/c.ts': "import './a.ts';\n",
        'functions/d.ts': "import './e.ts';\n",
        'functions/e.ts': "import './d.ts';\n",
        'agent/a.test.ts': "import './b.test.ts';\n",
        'agent/b.test.ts': "import './a.test.ts';\n",
      }),
    );
    expect(messages(report.violations)).toEqual([
      'import cycle: agent/a.ts → agent/b.ts → agent/a.ts (agent/b.ts:1 imports agent/a.ts)',
      'import cycle: functions/d.ts → functions/e.ts → functions/d.ts (functions/e.ts:1 imports functions/d.ts)',
    ]);
  });
});

describe('the import rule on this repository', () => {
  // The Lambda runtime loads the API's handler by the name the deployment gives it.
  const lambda = `${DEPLOYED.apiHandler.slice(0, DEPLOYED.apiHandler.lastIndexOf('.'))}.ts`;
  const report = checkImports(readTree(ROOT), { entries: [lambda] });

  it('holds: no area imports another, shared/ imports none of them, and no production file is in a cycle', () => {
    expect(messages(report.violations)).toEqual([]);
  });

  it('checks the programs and the handler, and leaves out only what tests alone use', () => {
    expect(report.production).toEqual(expect.arrayContaining(['agent/main.ts', 'driver/main.ts', lambda, 'agent/resources/decode-worker.ts']));
    // A file that comes to be used only by tests leaves the check; it should be a deliberate change.
    expect(report.testOnly).toEqual(['agent/resources/testdata/young-generation.ts']);
  });
});
