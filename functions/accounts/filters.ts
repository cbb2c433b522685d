import { ACCOUNT_STATES, SERVED_SOURCES, type Account } from '../../shared/accounts/schema.ts';
import { MAX_NAME_LENGTH } from '../../shared/accounts/settings.ts';
import { oneOf, zoneCheck, type TextCheck } from '../query-filters.ts';

/**
 * The filters of `GET /vendor/accounts` (docs/api.md#filters): each narrows the list, all together
 * narrow it further, and `total` counts what is left. They judge the account as served.
 */
export interface AccountFilters {
  states?: ReadonlySet<(typeof ACCOUNT_STATES)[number]>;
  zoneId?: string;
  sources?: ReadonlySet<(typeof SERVED_SOURCES)[number]>;
  namePrefix?: string;
}

/** What an account name may start with: the characters of a name, not more than a name is long. */
const NAME_PREFIX = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const namePrefixCheck: TextCheck<string> = (raw) =>
  NAME_PREFIX.test(raw) && raw.length <= MAX_NAME_LENGTH
    ? { value: raw }
    : { problem: `must be the start of an account name: 1 to ${MAX_NAME_LENGTH} letters, digits, ".", "_" or "-", starting with a letter or digit` };

/** The filter parameters by name, for `filteredQuery`. */
export const ACCOUNT_FILTER_CHECKS = { state: oneOf(ACCOUNT_STATES), zoneId: zoneCheck, source: oneOf(SERVED_SOURCES), namePrefix: namePrefixCheck };

/** The parsed parameters as filters. */
export function accountFilters(texts: { state?: AccountFilters['states']; zoneId?: string; source?: AccountFilters['sources']; namePrefix?: string }): AccountFilters {
  return {
    ...(texts.state === undefined ? {} : { states: texts.state }),
    ...(texts.zoneId === undefined ? {} : { zoneId: texts.zoneId }),
    ...(texts.source === undefined ? {} : { sources: texts.source }),
    ...(texts.namePrefix === undefined ? {} : { namePrefix: texts.namePrefix }),
  };
}

/** Whether the filters judge anything besides the name, so that each account must be looked at. */
export function filtersBeyondName(filters: AccountFilters): boolean {
  return filters.states !== undefined || filters.zoneId !== undefined || filters.sources !== undefined;
}

/** Whether the served account passes every filter. */
export function passes(filters: AccountFilters, account: Account): boolean {
  if (filters.states !== undefined && (account.state === undefined || !filters.states.has(account.state))) return false;
  if (filters.zoneId !== undefined && account.zoneId !== filters.zoneId) return false;
  if (filters.sources !== undefined && !filters.sources.has(account.source)) return false;
  return filters.namePrefix === undefined || account.name.startsWith(filters.namePrefix);
}

export const FILTER_DESCRIPTIONS: Record<keyof typeof ACCOUNT_FILTER_CHECKS, string> = {
  state: `Only accounts in one of these states: ${ACCOUNT_STATES.join(', ')}, separated by commas (an account never registered has no state and is left out).`,
  zoneId: 'Only accounts of this zone.',
  source: `Only accounts from one of these sources: ${SERVED_SOURCES.join(', ')}, separated by commas.`,
  namePrefix: 'Only accounts whose names start with this.',
};
