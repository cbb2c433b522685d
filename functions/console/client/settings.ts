import type { ConsoleSettings } from '../settings.ts';

/** `GET /ui/settings.json`: which ways of signing in are on, as the server defines it (functions/console/settings.ts). */
export type ConsoleClientSettings = ConsoleSettings;

export async function loadConsoleSettings(): Promise<ConsoleClientSettings> {
  try {
    const res = await fetch('/ui/settings.json', { credentials: 'omit', cache: 'no-store' });
    if (res.ok) return (await res.json()) as ConsoleClientSettings;
  } catch {
    // Without settings the token form still works: the API decides whether a token is good.
  }
  return { signIn: { token: true } };
}
