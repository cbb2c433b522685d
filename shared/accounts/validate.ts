import * as v from 'valibot';
import { VendorError, type Issue } from '../errors.ts';

/** `[2].zoneId`, `kubernetes.accounts[0].name`: array indexes in brackets, keys joined with dots. */
export function issuePath(issue: v.BaseIssue<unknown>, prefix = ''): string {
  let path = prefix;
  for (const item of issue.path ?? []) {
    if (typeof item.key === 'number') path += `[${item.key}]`;
    else path += path === '' ? String(item.key) : `.${String(item.key)}`;
  }
  return path;
}

/** One readable message per valibot issue, naming unknown fields as such. */
export function toIssues(issues: readonly v.BaseIssue<unknown>[], prefix = ''): Issue[] {
  return issues.map((issue) => {
    const last = issue.path?.at(-1);
    const unknownKey = last?.type === 'object' && 'origin' in last && last.origin === 'key';
    return {
      path: issuePath(issue, prefix),
      message: unknownKey ? 'unknown field' : issue.message,
    };
  });
}

/**
 * Validates at a boundary: returns the typed output or throws `invalid_input` naming every bad
 * element and field (all issues, not only the first).
 */
export function parseOrThrow<TSchema extends v.GenericSchema>(
  schema: TSchema,
  input: unknown,
  what: string,
  prefix = '',
): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  const issues = toIssues(result.issues, prefix);
  throw new VendorError('invalid_input', `${what} is invalid: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, {
    issues,
  });
}
