import * as v from 'valibot';
import { toIssues } from '../../shared/accounts/validate.ts';
import { apiAuthSchema, type ApiAuthConfig, type OpenAccountMode } from '../../shared/driver-config/api.ts';
import { VendorError, type Issue } from '../../shared/errors.ts';
import { SST_LINKS, linkedField, type SstLinkName } from '../../shared/links.ts';
import { isProductionEnv } from '../../shared/production.ts';

/**
 * Production mode: the API runs as the deployed Lambda handler, or `VENDOR_ENV=production` is set
 * (for instance a Node server run by an operator). In production mode the admin token is refused and
 * an OIDC issuer is required; outside it (`npm start`, tests) either may be used. Authentication is
 * never off: a configuration with neither is refused in every mode.
 */
export function isProductionMode(env: NodeJS.ProcessEnv, runtime: { lambda: boolean }): boolean {
  return runtime.lambda || isProductionEnv(env);
}

/**
 * Whether accounts without usable permissions take writes from every caller. Read-only by default
 * in production mode, where callers come from an organisation's identity provider and an account
 * left without permissions must not become writable by all of them; read-write elsewhere, so that
 * local use needs no roles.
 */
export function openAccountMode(config: Pick<ApiAuthConfig, 'openAccounts'>, production: boolean): OpenAccountMode {
  return config.openAccounts ?? (production ? 'readOnly' : 'readWrite');
}

/** What production mode or a missing method makes of an otherwise valid `api.auth`; empty when it may be used. */
export function authConfigIssues(config: ApiAuthConfig, production: boolean, prefix = 'api.auth'): Issue[] {
  const issues: Issue[] = [];
  if (production && config.adminToken !== undefined) {
    issues.push({ path: `${prefix}.adminToken`, message: 'the admin token is for local use only and is refused in production mode; use an OIDC issuer' });
  }
  if (production && config.oidc === undefined) {
    issues.push({ path: `${prefix}.oidc`, message: 'production mode needs an OIDC issuer (issuer and audience)' });
  } else if (config.oidc === undefined && config.adminToken === undefined) {
    issues.push({ path: prefix, message: 'the API does not run without authentication: set oidc (issuer and audience), or adminToken for local use' });
  }
  if (config.oidc?.resource !== undefined && !config.oidc.audience.includes(config.oidc.resource)) {
    issues.push({ path: `${prefix}.oidc.resource`, message: 'must be one of the audiences: the console asks for its access token with it, and the API accepts only its audiences' });
  }
  return issues;
}

export function checkAuthConfig(config: ApiAuthConfig, production: boolean, prefix = 'api.auth'): void {
  const issues = authConfigIssues(config, production, prefix);
  if (issues.length > 0) {
    throw new VendorError('invalid_input', `API authentication is not usable: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
}

/** Role lists in one linked value: names separated by commas or white space. */
function listOf(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(/[\s,]+/).filter((r) => r !== '');
}

/** A linked value that may be left empty (an SST secret's placeholder): empty is absent. */
function optionalLinked(env: NodeJS.ProcessEnv, link: SstLinkName): string | undefined {
  const value = linkedField(env, link, 'value')?.trim();
  return value === '' ? undefined : value;
}

/**
 * The deployed API's `api.auth`, from its SST links: issuer (`VendorOidcIssuer`), audience
 * (`VendorOidcAudience`, one or several separated by commas), roles claim (`VendorOidcRolesClaim`,
 * default `groups`), the console's client (`VendorOidcClientId`, `VendorOidcScopes` and
 * `VendorOidcResource`, each empty for none), account-manager roles (`VendorAccountManagerRoles`)
 * and open accounts (`VendorOpenAccounts`, `readOnly` or `readWrite`). Validated by the same
 * schema as the file; issues are named by link.
 */
export function apiAuthFromLinks(env: NodeJS.ProcessEnv): ApiAuthConfig {
  const issuer = linkedField(env, SST_LINKS.oidcIssuer, 'value');
  const audience = listOf(linkedField(env, SST_LINKS.oidcAudience, 'value'));
  const rolesClaim = linkedField(env, SST_LINKS.oidcRolesClaim, 'value');
  const managerRoles = listOf(linkedField(env, SST_LINKS.accountManagerRoles, 'value'));
  const openAccounts = linkedField(env, SST_LINKS.openAccounts, 'value');
  const clientId = optionalLinked(env, SST_LINKS.oidcClientId);
  const scopes = listOf(optionalLinked(env, SST_LINKS.oidcScopes));
  const resource = optionalLinked(env, SST_LINKS.oidcResource);
  const raw: Record<string, unknown> = {
    ...(managerRoles === undefined ? {} : { accountManagerRoles: managerRoles }),
    ...(openAccounts === undefined ? {} : { openAccounts: openAccounts.trim() }),
  };
  if (issuer !== undefined || audience !== undefined) {
    raw.oidc = {
      issuer,
      audience: audience?.length === 1 ? audience[0] : audience,
      ...(rolesClaim === undefined ? {} : { rolesClaim }),
      ...(clientId === undefined ? {} : { clientId }),
      ...(scopes === undefined ? {} : { scopes }),
      ...(resource === undefined ? {} : { resource }),
    };
  }
  const byLink: Record<string, string> = {
    'oidc.issuer': SST_LINKS.oidcIssuer,
    'oidc.audience': SST_LINKS.oidcAudience,
    'oidc.rolesClaim': SST_LINKS.oidcRolesClaim,
    'oidc.clientId': SST_LINKS.oidcClientId,
    'oidc.scopes': SST_LINKS.oidcScopes,
    'oidc.resource': SST_LINKS.oidcResource,
    accountManagerRoles: SST_LINKS.accountManagerRoles,
    openAccounts: SST_LINKS.openAccounts,
  };
  const result = v.safeParse(apiAuthSchema, raw, { abortEarly: false });
  if (result.success) return result.output;
  // The same messages as for the file, but named by the link an operator sets.
  const issues = toIssues(result.issues).map((i) => {
    const key = Object.keys(byLink).find((k) => i.path === k || i.path.startsWith(`${k}[`));
    return { path: key === undefined ? i.path : `SST link ${byLink[key]}`, message: i.message };
  });
  throw new VendorError('invalid_input', `API authentication links are invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}
