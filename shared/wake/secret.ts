import { VendorError } from '../errors.ts';
import { SST_LINKS, linkedField } from '../links.ts';
import { MIN_WAKE_SECRET_LENGTH } from './message.ts';

/** The environment variable that holds the wake secret outside SST. */
export const WAKE_SECRET_ENV = 'VENDOR_WAKE_SECRET';

/**
 * The secret wakes are signed with (docs/protocol.md#6b-wakes): `VENDOR_WAKE_SECRET`, else the SST
 * link `VendorWakeSecret`; undefined when neither is set (wakes are then off). One too short to be
 * safe is refused; the message never holds the value.
 */
export function wakeSecretFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env[WAKE_SECRET_ENV] || linkedField(env, SST_LINKS.wakeSecret, 'value');
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < MIN_WAKE_SECRET_LENGTH) {
    throw new VendorError('invalid_input', `the wake secret (${WAKE_SECRET_ENV} or the SST link ${SST_LINKS.wakeSecret}) must be at least ${MIN_WAKE_SECRET_LENGTH} characters`);
  }
  return raw;
}
