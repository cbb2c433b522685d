/** `GET /ui/settings.json` (functions/console/settings.ts): which ways of signing in are on. */
export interface ConsoleClientSettings {
  signIn: { token: boolean } & Record<string, unknown>;
}

export async function loadConsoleSettings(): Promise<ConsoleClientSettings> {
  try {
    const res = await fetch('/ui/settings.json', { credentials: 'omit', cache: 'no-store' });
    if (res.ok) return (await res.json()) as ConsoleClientSettings;
  } catch {
    // Without settings the token form still works: the API decides whether a token is good.
  }
  return { signIn: { token: true } };
}
