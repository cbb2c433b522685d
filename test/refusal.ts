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

/** The VendorError `promise` rejects with; fails the test when it rejects with something else or resolves. */
export async function refusalOf(promise: Promise<unknown>): Promise<VendorError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof VendorError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}
