/** Latency figures of one series of sequential requests. */
export interface Series {
  n: number;
  p50_ms: number;
  p99_ms: number;
  rps: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] as number;
}

export function summarize(durationsMs: readonly number[], elapsedMs: number): Series {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    rps: round((sorted.length / elapsedMs) * 1000),
  };
}

export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function ratio(a: number, b: number): number | null {
  return b === 0 ? null : round(a / b);
}
