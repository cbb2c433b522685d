import type { OidcConfig } from '../../shared/driver-config/api.ts';
import type { OidcSignIn } from './client/oidc.ts';
import { DEFAULT_CONSOLE_SETTINGS, type ConsoleOptions } from './settings.ts';

/**
 * The OIDC part of what the console shell reads to know its sign-in ways: the issuer and the
 * console's public client, or nothing when no client id is configured (the console then offers no
 * OIDC sign-in). Nothing here is secret: a public client has no secret, and the browser sends all of
 * it to the provider anyway.
 */
export function consoleOidcSignIn(oidc: OidcConfig | undefined): OidcSignIn | undefined {
  if (oidc?.clientId === undefined) return undefined;
  const scopes = oidc.scopes ?? [];
  return {
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
    ...(oidc.resource === undefined ? {} : { resource: oidc.resource }),
  };
}

/**
 * The origins the console's pages may connect to for OIDC sign-in (`connect-src`): the issuer's alone,
 * where the browser reads discovery and exchanges the code. A provider whose token endpoint is on
 * another origin is not reachable from the console (docs/console.md#signing-in-with-openid-connect).
 */
export function oidcConnectSources(oidc: OidcConfig | undefined): string[] {
  const signIn = consoleOidcSignIn(oidc);
  return signIn === undefined ? [] : [new URL(signIn.issuer).origin];
}

/**
 * The console's options with OIDC sign-in added when `api.auth.oidc` names a console client: the
 * settings document offers it, and the pages may connect to the issuer. `base` unchanged otherwise.
 */
export function consoleOptionsWithOidc(oidc: OidcConfig | undefined, base: ConsoleOptions = {}): ConsoleOptions {
  const signIn = consoleOidcSignIn(oidc);
  if (signIn === undefined) return base;
  const settings = base.settings ?? DEFAULT_CONSOLE_SETTINGS;
  return {
    ...base,
    settings: { ...settings, signIn: { ...settings.signIn, oidc: signIn } },
    connectOrigins: [...(base.connectOrigins ?? []), ...oidcConnectSources(oidc)],
  };
}
