/** How long ago `ms` milliseconds is, in words a glance can read. */
export function ageText(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m ago`;
  return `${Math.floor(h / 24)}d ago`;
}

export function sinceText(iso: string | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return '—';
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : ageText(now - at);
}

export function timeText(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toLocaleString();
}

export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * A kind's watches (docs/console.md#one-account): a kind restricted to namespaces has one watch per
 * namespace, its `scopes`, and `watching` of them open; some open is not the same as all.
 */
export function watchText({ scopes, watching }: { scopes: number; watching: number }): { text: string; complete: boolean } {
  if (watching === 0) return { text: 'not watching', complete: false };
  if (watching >= scopes) return { text: 'watching', complete: true };
  return { text: `watching ${watching} of ${scopes}`, complete: false };
}
