/**
 * Which SST links a deployed entry point reads, found from the code itself: every file reachable
 * from the entry through relative imports (static, re-exports and dynamic `import()`), scanned for
 * `SST_LINKS.<key>` and for link names written out as strings.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { SST_LINKS } from '../../shared/links.ts';

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every project file the entry loads, itself included, as paths relative to `root`. */
export function reachableFiles(root: string, entry: string): string[] {
  const seen = new Set<string>();
  const queue = [resolve(root, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    if (!existsSync(file)) throw new Error(`${relative(root, file)} is imported but does not exist`);
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), match[1]!);
      if (target.endsWith('.ts')) queue.push(target);
    }
  }
  return [...seen].map((f) => relative(root, f)).sort();
}

/** The link names the files read, with the files that read each. */
export function linksRead(root: string, files: readonly string[]): Map<string, string[]> {
  const byKey = new Map<string, string>(Object.entries(SST_LINKS));
  const found = new Map<string, string[]>();
  const add = (name: string, file: string) => found.set(name, [...(found.get(name) ?? []), file]);
  for (const file of files) {
    const text = readFileSync(resolve(root, file), 'utf8');
    for (const match of text.matchAll(/\bSST_LINKS\.(\w+)/g)) {
      const name = byKey.get(match[1]!);
      if (name === undefined) throw new Error(`${file} reads SST_LINKS.${match[1]}, which shared/links.ts does not declare`);
      add(name, file);
    }
    if (file === 'shared/links.ts') continue;
    for (const name of byKey.values()) {
      if (new RegExp(`['"\`]${name}['"\`]`).test(text)) add(name, file);
    }
  }
  return found;
}

/** Packages the files import at run time (type-only imports left out), by package name. */
export function packagesImported(root: string, files: readonly string[]): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(resolve(root, file), 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(import|export)(\s+type\b)?[^'";]*?from\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)) {
      if (match[2] !== undefined) continue;
      const spec = match[3] ?? match[4]!;
      if (spec.startsWith('.') || spec.startsWith('node:')) continue;
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
      found.set(name, [...(found.get(name) ?? []), file]);
    }
  }
  return found;
}
