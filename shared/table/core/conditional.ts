import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type UpdateCommandInput, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';

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

/** Runs a conditional update and answers the item after it, or undefined when the condition failed. */
export async function updateIfCondition(
  t: { client: { send(command: UpdateCommand): Promise<UpdateCommandOutput> } },
  input: UpdateCommandInput,
): Promise<Record<string, unknown> | undefined> {
  try {
    const out = await t.client.send(new UpdateCommand(input));
    return out.Attributes ?? {};
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}
