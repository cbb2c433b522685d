import { VendorError } from '../shared/errors.ts';

/** The VendorError `fn` throws; fails the test when it throws something else or nothing. */
export function refusal(fn: () => unknown): VendorError {
  try {
    fn();
  } catch (e) {
    if (e instanceof VendorError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}
