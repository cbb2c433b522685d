/**
 * The bearer token of the signed-in operator. Kept in sessionStorage only: it goes with the tab,
 * never into localStorage, a cookie or a URL (docs/console.md#security).
 */
const TOKEN_KEY = 'vendor-console.token';

export function storedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}
