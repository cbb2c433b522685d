/**
 * The Content-Security-Policy of the console's pages and assets (docs/console.md#security): scripts
 * and styles from this origin only (no inline script or style, no eval), requests to this origin
 * only (plus `connectOrigins`, such as an OIDC issuer's), nothing framed or framing it.
 */
export function consoleContentSecurityPolicy(connectOrigins: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    ['connect-src', "'self'", ...connectOrigins].join(' '),
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
