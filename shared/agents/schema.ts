/**
 * The one validation of an agent identity's name and allowances, used by the management API
 * (`PUT /vendor/agent-identities/{name}`) and by `auth.identities[]` of `vendor-driver.yml`.
 */
import * as v from 'valibot';
import type { AgentIdentity } from './identity.ts';

/** Longest identity name: short enough for a log field and a certificate's URI. */
export const MAX_IDENTITY_NAME_LENGTH = 128;
/** Longest name or pattern in an allowance list. */
export const MAX_PATTERN_LENGTH = 253;
/** Most entries in one allowance list. */
export const MAX_PATTERNS = 100;

const IDENTITY_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
// Names of zones, agents and accounts are letters, digits, ".", "_" and "-"; `*` stands for any run.
const PATTERN = /^[A-Za-z0-9._*-]+$/;

export const identityNameSchema = v.pipe(
  v.string('must be a string'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_IDENTITY_NAME_LENGTH, `must be at most ${MAX_IDENTITY_NAME_LENGTH} characters`),
  v.regex(IDENTITY_NAME, 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit'),
);

const patternList = v.pipe(
  v.array(
    v.pipe(
      v.string('must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(MAX_PATTERN_LENGTH, `must be at most ${MAX_PATTERN_LENGTH} characters`),
      v.regex(PATTERN, 'must be a name or a pattern of letters, digits, ".", "_", "-" and "*"'),
    ),
    'must be a list of names or patterns',
  ),
  v.maxLength(MAX_PATTERNS, `must hold at most ${MAX_PATTERNS} entries`),
);

const patterns = (what: string) => v.pipe(patternList, v.description(`${what}: names or patterns where \`*\` stands for any run of characters.`));

/** What an identity's agents may do, each allowance given: as an identity is served (docs/api.md#agent-identities). */
export const allowanceLists = {
  zones: patterns('Zones its agents may serve'),
  unzoned: v.pipe(v.boolean('must be true or false'), v.description('Whether its agents may be sent accounts pinned to no zone.')),
  agentIds: patterns('Agent ids its agents may use'),
  staticAccounts: patterns('Static account names its agents may define'),
};

/**
 * What an identity's agents may do, as it is written down. Every list defaults to empty (nothing
 * allowed) and `unzoned` to false, so an identity grants only what is written down.
 */
export const allowanceEntries = {
  zones: v.optional(allowanceLists.zones, []),
  unzoned: v.optional(allowanceLists.unzoned, false),
  agentIds: v.optional(allowanceLists.agentIds, []),
  staticAccounts: v.optional(allowanceLists.staticAccounts, []),
};

/** The body of `PUT /vendor/agent-identities/{name}`. */
export const allowancesSchema = v.strictObject(allowanceEntries);

export type Allowances = v.InferOutput<typeof allowancesSchema>;

export function identityOf(name: string, allowances: Allowances): AgentIdentity {
  return { name, zones: allowances.zones, unzoned: allowances.unzoned, agentIds: allowances.agentIds, staticAccounts: allowances.staticAccounts };
}

/** Whether two identities allow the same (a stream of a changed identity is ended, so its agent reconnects under the new one). */
export function sameAllowances(a: AgentIdentity, b: AgentIdentity): boolean {
  const same = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((e, i) => e === y[i]);
  return a.name === b.name && a.unzoned === b.unzoned && same(a.zones, b.zones) && same(a.agentIds, b.agentIds) && same(a.staticAccounts, b.staticAccounts);
}
