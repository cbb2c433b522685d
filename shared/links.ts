import { VendorError } from './errors.ts';

/**
 * The SST links deployed code reads. SST injects each linked resource into the function's or
 * container's environment as `SST_RESOURCE_<name>`, a JSON object (`{ name }` for a table,
 * `{ value }` for a secret); this is the only place that reads those variables, so the deployment's
 * check can compare what `sst.config.ts` links with what the code reads.
 */
export const SST_LINKS = {
  /** The DynamoDB table (`name`). */
  table: 'VendorTable',
  /** Bearer tokens agents present to the driver (`value`: tokens separated by commas or white space). */
  agentTokens: 'VendorAgentTokens',
  /** OIDC issuer URL whose JWKS verifies API callers (`value`). */
  oidcIssuer: 'VendorOidcIssuer',
  /** Audience API caller tokens must carry (`value`; several separated by commas). */
  oidcAudience: 'VendorOidcAudience',
  /** Claim holding the API caller's roles, a name or dot path (`value`; default `groups`). */
  oidcRolesClaim: 'VendorOidcRolesClaim',
  /** Roles that may manage accounts through the API (`value`: names separated by commas or white space). */
  accountManagerRoles: 'VendorAccountManagerRoles',
} as const;

export type SstLinkName = (typeof SST_LINKS)[keyof typeof SST_LINKS];

/** One field of a linked resource, or undefined when the resource is not linked. */
export function linkedField(env: NodeJS.ProcessEnv, link: SstLinkName, field: 'name' | 'value'): string | undefined {
  const variable = `SST_RESOURCE_${link}`;
  const raw = env[variable];
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (cause) {
    throw new VendorError('invalid_input', `${variable} is not JSON`, { cause });
  }
  const found = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)[field] : undefined;
  if (typeof found !== 'string') throw new VendorError('invalid_input', `${variable} has no string field "${field}"`);
  return found;
}
