// The import rule (docs/testing.md, "The import rule"): `functions/`, `driver/`, `agent/` and `cli/`
// never import each other, `shared/` imports none of them, and production files import no cycle. The agent ships
// alone in its image with `agent/` and `shared/` only, so a single stray import breaks it there
// while everything still passes in the checkout. Tests may import anything.
//
// `checkImports` is pure over a map of repository-relative path → source text, so its test can run
// it on small made-up trees as well as on the real one (`readTree`).
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

export const AREAS = ['functions', 'driver', 'agent', 'cli', 'shared'] as const;
export type Area = (typeof AREAS)[number];

/** How a file names another: an import or export-from, or a `new URL('…', import.meta.url)` it loads at run time (a worker). */
export type ReferenceKind = 'import' | 'url';

export type Reference = {
  readonly from: string;
  readonly line: number;
  readonly specifier: string;
  /** The repository-relative path the specifier resolves to (a file of the tree when there is one). */
  readonly to: string;
  readonly kind: ReferenceKind;
};

export type BoundaryViolation = {
  readonly kind: 'boundary';
  readonly file: string;
  readonly line: number;
  readonly imported: string;
  readonly message: string;
};

export type CycleViolation = {
  readonly kind: 'cycle';
  /** The files of one cycle in import order; the first is imported again by the last. */
  readonly files: readonly string[];
  readonly file: string;
  readonly line: number;
  readonly imported: string;
  readonly message: string;
};

export type Violation = BoundaryViolation | CycleViolation;

export type ImportReport = {
  readonly violations: readonly Violation[];
  /** The files checked, sorted. */
  readonly production: readonly string[];
  /** Non-test files under the areas that only tests use, sorted: they are not checked. */
  readonly testOnly: readonly string[];
};

/** Where each area may reach: its own files and `shared/`; `shared/` only itself. */
const ALLOWED: Record<Area, readonly Area[]> = {
  functions: ['functions', 'shared'],
  driver: ['driver', 'shared'],
  agent: ['agent', 'shared'],
  cli: ['cli', 'shared'],
  shared: ['shared'],
};

export function areaOf(path: string): Area | undefined {
  const top = path.split('/')[0];
  return AREAS.find((a) => a === top);
}

/** Test code: `*.test.ts` anywhere and everything under `test/`. */
export function isTestFile(path: string): boolean {
  return path.endsWith('.test.ts') || path.startsWith('test/');
}

function isTypeScript(path: string): boolean {
  return path.endsWith('.ts') || path.endsWith('.mts') || path.endsWith('.cts') || path.endsWith('.tsx');
}

/** Every module a file names, by parsing it: comments and strings never count. */
export function referencesOf(path: string, source: string, files: ReadonlySet<string>): Reference[] {
  const sf = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Reference[] = [];
  const add = (literal: ts.Node, kind: ReferenceKind) => {
    if (!ts.isStringLiteralLike(literal)) return;
    const to = resolveSpecifier(path, literal.text, files);
    if (to === undefined) return;
    const line = sf.getLineAndCharacterOfPosition(literal.getStart(sf)).line + 1;
    found.push({ from: path, line, specifier: literal.text, to, kind });
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      add(node.moduleSpecifier, 'import');
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, 'import');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0]) {
      add(node.arguments[0], 'import');
    } else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require' && node.arguments[0]) {
      add(node.arguments[0], 'import');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, 'import');
    } else if (ts.isNewExpression(node) && isImportMetaUrl(node)) {
      add(node.arguments![0]!, 'url');
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** `new URL('<literal>', import.meta.url)`: a file loaded by path at run time, such as a worker. */
function isImportMetaUrl(node: ts.NewExpression): boolean {
  const args = node.arguments;
  if (!ts.isIdentifier(node.expression) || node.expression.text !== 'URL' || !args || args.length !== 2) return false;
  const base = args[1]!;
  return (
    ts.isStringLiteralLike(args[0]!) &&
    ts.isPropertyAccessExpression(base) &&
    base.name.text === 'url' &&
    ts.isMetaProperty(base.expression) &&
    base.expression.keywordToken === ts.SyntaxKind.ImportKeyword
  );
}

/**
 * A relative specifier as a repository-relative path: the file of the tree it names, trying the
 * spellings the resolver accepts, or else the path itself (a JSON or `.proto` file, a folder), so
 * that a reach into another area is seen even when it is not TypeScript. Packages and `node:` are
 * not part of the rule.
 */
export function resolveSpecifier(from: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../') && specifier !== '.' && specifier !== '..') return undefined;
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const candidates = [base, `${base}.ts`, `${base}.d.ts`, `${base}/index.ts`, base.replace(/\.(m|c)?js$/, '.$1ts')];
  return candidates.find((c) => files.has(c)) ?? base.replace(/\/$/, '');
}

/**
 * Files under the areas that only tests use: imported (or loaded) by at least one file, and by
 * none but tests and other such files. A file that runs as a program (`import.meta.main`, or named
 * in `CheckOptions.entries`) is never one, even when only its test imports it.
 */
function testOnlyFiles(sources: ReadonlyMap<string, string>, refs: readonly Reference[], programs: ReadonlySet<string>): Set<string> {
  const importers = new Map<string, Set<string>>();
  for (const r of refs) {
    if (r.from === r.to) continue;
    const set = importers.get(r.to) ?? new Set<string>();
    set.add(r.from);
    importers.set(r.to, set);
  }
  const importsOf = new Map<string, string[]>();
  for (const r of refs) importsOf.set(r.from, [...(importsOf.get(r.from) ?? []), r.to]);
  // Largest set that holds: start from every candidate and drop those something else uses, and
  // those no test reaches (files that import only each other are not thereby test code).
  const candidates = new Set(
    [...sources.keys()].filter((f) => areaOf(f) && !isTestFile(f) && !programs.has(f) && (importers.get(f)?.size ?? 0) > 0),
  );
  for (let changed = true; changed; ) {
    changed = false;
    for (const f of candidates) {
      const usedElsewhere = [...importers.get(f)!].some((i) => !isTestFile(i) && !candidates.has(i));
      if (usedElsewhere) {
        candidates.delete(f);
        changed = true;
      }
    }
    const reached = new Set<string>();
    const queue = [...sources.keys()].filter(isTestFile);
    while (queue.length > 0) {
      for (const to of importsOf.get(queue.pop()!) ?? []) {
        if (candidates.has(to) && !reached.has(to)) {
          reached.add(to);
          queue.push(to);
        }
      }
    }
    for (const f of candidates) {
      if (!reached.has(f)) {
        candidates.delete(f);
        changed = true;
      }
    }
  }
  return candidates;
}

function runsAsProgram(path: string, source: string): boolean {
  if (!source.includes('import.meta.main')) return false;
  const sf = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  let found = false;
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'main' &&
      ts.isMetaProperty(node.expression) &&
      node.expression.keywordToken === ts.SyntaxKind.ImportKeyword
    ) {
      found = true;
    }
    if (!found) ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

export type CheckOptions = {
  /**
   * Files the project runs without importing them and that do not say so with `import.meta.main`,
   * such as a Lambda handler named in the deployment: never counted as test-only.
   */
  readonly entries?: readonly string[];
};

export function checkImports(sources: ReadonlyMap<string, string>, options: CheckOptions = {}): ImportReport {
  const files = new Set([...sources.keys()].filter(isTypeScript));
  const refs: Reference[] = [];
  const programs = new Set<string>(options.entries ?? []);
  for (const f of [...files].sort()) {
    const text = sources.get(f)!;
    refs.push(...referencesOf(f, text, files));
    if (runsAsProgram(f, text)) programs.add(f);
  }
  const testOnly = testOnlyFiles(sources, refs, programs);
  const production = new Set([...files].filter((f) => areaOf(f) && !isTestFile(f) && !testOnly.has(f)));

  const violations: Violation[] = [];
  for (const r of refs) {
    if (!production.has(r.from)) continue;
    const area = areaOf(r.from)!;
    const target = areaOf(r.to);
    if (target === undefined || ALLOWED[area].includes(target)) continue;
    const how = r.kind === 'url' ? 'loads' : 'imports';
    violations.push({
      kind: 'boundary',
      file: r.from,
      line: r.line,
      imported: r.to,
      message: `${r.from}:${r.line} ${how} ${r.to}: ${area}/ must not import ${target}/ (${area === 'shared' ? 'shared/ imports none of functions/, driver/, agent/' : `${area}/ may import only ${area}/ and shared/`})`,
    });
  }
  violations.push(...cycles(production, refs));
  return { violations, production: [...production].sort(), testOnly: [...testOnly].sort() };
}

/**
 * One cycle for each group of production files that import each other (Tarjan's strongly
 * connected components), as the shortest way from the group's first file back to itself.
 * A worker loaded by URL runs as a module graph of its own, so only imports count here.
 */
function cycles(production: ReadonlySet<string>, refs: readonly Reference[]): CycleViolation[] {
  const edges = new Map<string, Map<string, number>>();
  for (const r of refs) {
    if (r.kind !== 'import' || !production.has(r.from) || !production.has(r.to)) continue;
    const out = edges.get(r.from) ?? new Map<string, number>();
    if (!out.has(r.to)) out.set(r.to, r.line);
    edges.set(r.from, out);
  }
  const next = (f: string) => [...(edges.get(f)?.keys() ?? [])].sort();

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let counter = 0;
  // Iterative, so a long chain of imports cannot overflow the call stack.
  for (const root of [...production].sort()) {
    if (index.has(root)) continue;
    const work: { node: string; children: string[]; i: number }[] = [];
    const open = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: next(node), i: 0 });
    };
    open(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      if (top.i < top.children.length) {
        const child = top.children[top.i++]!;
        if (!index.has(child)) open(child);
        else if (onStack.has(child)) low.set(top.node, Math.min(low.get(top.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const group: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          group.push(member);
        } while (member !== top.node);
        const selfLoop = edges.get(top.node)?.has(top.node) ?? false;
        if (group.length > 1 || selfLoop) groups.push(group.sort());
      }
    }
  }

  return groups
    .sort((a, b) => a[0]!.localeCompare(b[0]!))
    .map((group) => {
      const members = new Set(group);
      const start = group[0]!;
      const path = shortestLoop(start, members, next);
      const last = path[path.length - 1]!;
      const line = edges.get(last)!.get(start)!;
      const shown = [...path, start].join(' → ');
      return {
        kind: 'cycle',
        files: path,
        file: last,
        line,
        imported: start,
        message: `import cycle: ${shown} (${last}:${line} imports ${start})`,
      };
    });
}

/** Breadth-first from `start` within its group until an edge leads back to it. */
function shortestLoop(start: string, members: ReadonlySet<string>, next: (f: string) => string[]): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length > 0) {
    const f = queue.shift()!;
    for (const n of next(f)) {
      if (n === start) {
        const path = [f];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return path;
      }
      if (!members.has(n) || seen.has(n)) continue;
      seen.add(n);
      cameFrom.set(n, f);
      queue.push(n);
    }
  }
  return [start];
}

/** Folders and files of the repository whose imports decide which files only tests use. */
const TREE_ROOTS = [...AREAS, 'test', 'scripts', 'bench', 'infra'];
const SKIP = new Set(['node_modules', '.data', '.sst']);

/** The repository's TypeScript sources, keyed by repository-relative path. */
export function readTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (SKIP.has(entry.name)) continue;
      const path = `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && isTypeScript(entry.name)) out.set(path, readFileSync(join(root, path), 'utf8'));
    }
  };
  for (const top of TREE_ROOTS) walk(top);
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isFile() && isTypeScript(entry.name)) out.set(entry.name, readFileSync(join(root, entry.name), 'utf8'));
  }
  return out;
}
