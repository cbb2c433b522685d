import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/** True when a conditional write lost (the item changed, or was or was not there). */
export function isConditionFailure(err: unknown): boolean {
  return err instanceof ConditionalCheckFailedException || (err as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException';
}

/** Runs a conditional write and answers false instead of throwing when its condition fails. */
export async function tryConditional(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (err) {
    if (isConditionFailure(err)) return false;
    throw err;
  }
}
