import type { OidcSignIn } from './client/oidc.ts';

/**
 * `GET /ui/settings.json`: what the console's shell needs before anyone signs in, chiefly which ways
 * to sign in are on (docs/console.md#sign-in). Nothing in it is secret.
 */
export interface ConsoleSettings {
  signIn: {
    /** Pasting a bearer token (the admin token of `npm start`, or a token from the identity provider). */
    token: boolean;
    /** OpenID Connect at the API's issuer, when a console client id is configured (functions/console/oidc-settings.ts). */
    oidc?: OidcSignIn;
  };
}

export const DEFAULT_CONSOLE_SETTINGS: ConsoleSettings = { signIn: { token: true } };

/** The console's options in the app (functions/app.ts `AppDeps.console`). */
export interface ConsoleOptions {
  settings?: ConsoleSettings;
  /** Origins the console's pages may call besides their own (`connect-src`). */
  connectOrigins?: readonly string[];
  /** Where the built console is (functions/console/asset-store.ts `defaultConsoleDir`). */
  dir?: string;
}
