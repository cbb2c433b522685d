import type { Issue } from '../errors.ts';

/** One issue per repeated name, at every occurrence after the first: `<prefix>[i].name`. */
export function duplicateNameIssues(records: readonly { name: string }[], prefix = ''): Issue[] {
  const seen = new Map<string, number>();
  const issues: Issue[] = [];
  records.forEach((record, i) => {
    const first = seen.get(record.name);
    if (first === undefined) seen.set(record.name, i);
    else issues.push({ path: `${prefix}[${i}].name`, message: `duplicate name "${record.name}" (first at ${prefix}[${first}])` });
  });
  return issues;
}
