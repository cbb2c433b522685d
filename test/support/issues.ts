import type { Issue } from '../../shared/errors.ts';

/** The issues of the VendorError `fn` throws; fails when it throws nothing. */
export function issuesOf(fn: () => unknown): Issue[] {
  try {
    fn();
  } catch (err) {
    return [...((err as { issues?: Issue[] }).issues ?? [])];
  }
  throw new Error('expected a failure');
}
