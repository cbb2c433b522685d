import type { Issue } from '../errors.ts';

/**
 * One issue per repeated name, at every occurrence after the first: `<prefix>[i].name`. Elements
 * without a string name are skipped (their own validation reports them) but keep their index.
 */
export function duplicateNameIssues(records: readonly unknown[], prefix = ''): Issue[] {
  const seen = new Map<string, number>();
  const issues: Issue[] = [];
  records.forEach((record, i) => {
    const name = (record as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, i);
    else issues.push({ path: `${prefix}[${i}].name`, message: `duplicate name "${name}" (first at ${prefix}[${first}])` });
  });
  return issues;
}
