// The exported-name rule (docs/testing.md, "The exported-name rule"): across `functions/`, `driver/`,
// `agent/` and `shared/`, a name that a production file exports (a type, interface, class, function
// or constant) is declared by that file alone, so that searching for it finds one thing. A file may
// pass on another's export (`export { x } from`, or an imported binding exported again): that is
// the same thing, not a second one, and is not counted.
//
// `exportedNames` and `duplicateExports` are pure over a map of repository-relative path → source
// text, so the test can run them on small made-up trees as well as on the real one (`readTree` of
// imports.ts).
import ts from 'typescript';
import { areaOf, isTestFile } from './imports.ts';

export type ExportedName = {
  readonly name: string;
  readonly file: string;
  readonly line: number;
};

export type DuplicateExport = {
  readonly name: string;
  /** Where each file declares it, sorted by file. */
  readonly places: readonly ExportedName[];
  readonly message: string;
};

export type NameCheckOptions = {
  /** Folders (with a trailing slash) whose files are not checked. */
  readonly exempt?: readonly string[];
  /** Names declared in more than one file on purpose, each with the files allowed to declare it. */
  readonly allowed?: Readonly<Record<string, readonly string[]>>;
};

function hasExportModifier(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
}

function hasDefaultModifier(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
}

/** Names bound by a declaration (`const { a, b: [c] } = …` binds a and c). */
function boundNames(name: ts.BindingName): ts.Identifier[] {
  if (ts.isIdentifier(name)) return [name];
  return name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : boundNames(e.name)));
}

/** Every name a file declares and exports itself; re-exports of another file's names are left out. */
export function exportedNames(path: string, source: string): ExportedName[] {
  const sf = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lineOf = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const imported = new Set<string>();
  const local = new Map<string, ts.Node>();
  const found: ExportedName[] = [];
  const add = (name: string, node: ts.Node) => found.push({ name, file: path, line: lineOf(node) });

  for (const statement of sf.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (clause?.name) imported.add(clause.name.text);
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) imported.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) imported.add(e.name.text);
      continue;
    }
    if (ts.isImportEqualsDeclaration(statement)) {
      imported.add(statement.name.text);
      continue;
    }
    const declared: ts.Identifier[] = [];
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) declared.push(...boundNames(d.name));
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      declared.push(statement.name);
    }
    for (const id of declared) {
      local.set(id.text, id);
      // `export default` has no name of its own to clash with.
      if (hasExportModifier(statement) && !hasDefaultModifier(statement)) add(id.text, id);
    }
  }

  // `export { a, b as c }` without `from`: a name declared here counts (as exported), an imported one is passed on.
  for (const statement of sf.statements) {
    if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier || !statement.exportClause) continue;
    if (!ts.isNamedExports(statement.exportClause)) continue;
    for (const e of statement.exportClause.elements) {
      const target = (e.propertyName ?? e.name).text;
      if (imported.has(target) || !local.has(target)) continue;
      add(e.name.text, e.name);
    }
  }
  return found;
}

/** Production files of the four areas: tests and everything under `test/` are not checked. */
function checked(path: string, exempt: readonly string[]): boolean {
  return areaOf(path) !== undefined && !isTestFile(path) && !path.endsWith('.d.ts') && !exempt.some((e) => path.startsWith(e));
}

/** Names declared and exported by more than one checked file, sorted by name. */
export function duplicateExports(sources: ReadonlyMap<string, string>, options: NameCheckOptions = {}): DuplicateExport[] {
  const exempt = options.exempt ?? [];
  const byName = new Map<string, ExportedName[]>();
  for (const [path, source] of [...sources].sort(([a], [b]) => a.localeCompare(b))) {
    if (!checked(path, exempt)) continue;
    for (const e of exportedNames(path, source)) byName.set(e.name, [...(byName.get(e.name) ?? []), e]);
  }
  const out: DuplicateExport[] = [];
  for (const [name, all] of [...byName].sort(([a], [b]) => a.localeCompare(b))) {
    const files = [...new Set(all.map((e) => e.file))];
    if (files.length < 2) continue;
    const allowed = options.allowed?.[name] ?? [];
    if (files.every((f) => allowed.includes(f))) continue;
    const places = files.map((f) => all.find((e) => e.file === f)!);
    out.push({ name, places, message: `${name} is exported by ${places.map((p) => `${p.file}:${p.line}`).join(', ')}: give each its own name` });
  }
  return out;
}
