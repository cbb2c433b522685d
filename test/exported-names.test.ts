import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { duplicateExports, exportedNames, type NameCheckOptions } from './exported-names.ts';
import { readTree } from './imports.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const tree = (files: Record<string, string>) => new Map(Object.entries(files));
const names = (path: string, source: string) => exportedNames(path, source).map((e) => e.name);

describe('the exported names of one file', () => {
  it('are the types, interfaces, classes, functions and constants it declares with export', () => {
    const source = [
      'export type A = string;',
      'export interface B { b: number }',
      'export class C {}',
      'export function d(): void {}',
      'export async function e(): Promise<void> {}',
      'export const F = 1, g = 2;',
      'export const { h, i: [j] } = { h: 1, i: [2] };',
      'const local = 3;',
      'type Hidden = number;',
      'export default function main(): Hidden { return local; }',
      '',
    ].join('\n');
    expect(names('shared/x.ts', source)).toEqual(['A', 'B', 'C', 'd', 'e', 'F', 'g', 'h', 'j']);
  });

  it("count `export { local }` under the name it is exported by, and leave out another file's names passed on", () => {
    const source = [
      "import { passed } from './a.ts';",
      "import * as all from './b.ts';",
      "export { fromElsewhere } from './c.ts';",
      "export * from './d.ts';",
      "export * as spaced from './e.ts';",
      'const mine = 1;',
      'type Kept = string;',
      'export { passed, all, mine as renamed, type Kept };',
      '',
    ].join('\n');
    expect(names('shared/x.ts', source)).toEqual(['renamed', 'Kept']);
  });

  it('say where each is declared', () => {
    expect(exportedNames('agent/x.ts', '// one\n\nexport interface Found {}\n')).toEqual([{ name: 'Found', file: 'agent/x.ts', line: 3 }]);
  });
});

describe('the exported-name rule on made-up trees', () => {
  it('refuses a name exported by two files, naming each file and line', () => {
    const report = duplicateExports(
      tree({
        'agent/resources/discovery.ts': 'export interface Discovery { kinds: string[] }\n',
        'agent/operations/discovery.ts': '\nexport class Discovery {}\n',
        'driver/other.ts': 'export const unique = 1;\n',
      }),
    );
    expect(report).toEqual([
      {
        name: 'Discovery',
        places: [
          { name: 'Discovery', file: 'agent/operations/discovery.ts', line: 2 },
          { name: 'Discovery', file: 'agent/resources/discovery.ts', line: 1 },
        ],
        message: 'Discovery is exported by agent/operations/discovery.ts:2, agent/resources/discovery.ts:1: give each its own name',
      },
    ]);
  });

  it('sees the same name across areas and kinds of declaration (a function and a type)', () => {
    const report = duplicateExports(tree({ 'functions/a.ts': 'export function main() {}\n', 'driver/b.ts': 'export type main = number;\n' }));
    expect(report.map((d) => d.name)).toEqual(['main']);
  });

  it('lets a file pass on what another exports', () => {
    const report = duplicateExports(
      tree({
        'shared/protocol/generated/Hello.ts': 'export interface Hello { id: string }\n',
        'shared/protocol/messages.ts': "export type { Hello } from './generated/Hello.ts';\n",
        'shared/protocol/wire.ts': "import type { Hello } from './generated/Hello.ts';\nexport type { Hello };\n",
      }),
    );
    expect(report).toEqual([]);
  });

  it('checks only production files of functions/, driver/, agent/ and shared/', () => {
    const report = duplicateExports(
      tree({
        'agent/a.ts': 'export const clash = 1;\n',
        'agent/a.test.ts': 'export const clash = 2;\n',
        'test/support/b.ts': 'export const clash = 3;\n',
        'bench/c.ts': 'export const clash = 4;\n',
        'scripts/d.ts': 'export const clash = 5;\n',
      }),
    );
    expect(report).toEqual([]);
  });

  it('leaves out an exempt folder, and allows a name only in the files the allow-list gives it', () => {
    const files = {
      'shared/table/a.ts': 'export type Scope = string;\n',
      'shared/operations/b.ts': 'export type Scope = number;\n',
      'shared/x.ts': 'export type Same = 1;\n',
      'shared/y.ts': 'export type Same = 1;\n',
    };
    const options: NameCheckOptions = { exempt: ['shared/table/'], allowed: { Same: ['shared/x.ts', 'shared/y.ts'] } };
    expect(duplicateExports(tree(files), options)).toEqual([]);
    const third = duplicateExports(tree({ ...files, 'agent/z.ts': 'export type Same = 2;\n' }), options);
    expect(third.map((d) => d.message)).toEqual(['Same is exported by agent/z.ts:1, shared/x.ts:1, shared/y.ts:1: give each its own name']);
  });
});

describe('the exported-name rule on this repository', () => {
  const options: NameCheckOptions = {
    // The table stores keep their names unique among themselves, and are left out of this rule.
    exempt: ['shared/table/'],
    allowed: {
      // One account's settings: as the API, the table and the driver validate them, and the protocol
      // message that carries the same keys (shared/accounts/settings-message.ts converts between them).
      AccountSettings: ['shared/accounts/settings.ts', 'shared/protocol/generated/vendor/agent/v1/AccountSettings.ts'],
    },
  };
  const sources = readTree(ROOT);

  it('holds: no two production files export the same name', () => {
    expect(duplicateExports(sources, options).map((d) => d.message)).toEqual([]);
  });

  it('allows only names that are still exported by every file the allow-list gives them', () => {
    for (const [name, files] of Object.entries(options.allowed ?? {})) {
      for (const file of files) expect(names(file, sources.get(file) ?? ''), `${name} in ${file}`).toContain(name);
    }
  });

  it('fails once a file exports a name another already does', () => {
    const added = new Map(sources).set('agent/accounts/added.ts', 'export class ReplicaAccounts {}\n');
    expect(duplicateExports(added, options).map((d) => d.message)).toEqual([
      expect.stringMatching(/^ReplicaAccounts is exported by agent\/accounts\/added\.ts:1, driver\/accounts\/replica-accounts\.ts:\d+: give each its own name$/),
    ]);
  });
});
