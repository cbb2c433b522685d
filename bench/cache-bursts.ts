/**
 * The watch figure of `npm run bench:cache` from its bursts: each round gives the informers a burst,
 * then the agent the same burst (informers, agent, informers, agent, ...), and each round's ratio
 * compares two bursts made a few seconds apart. The figure is the median of those ratios, so one slow
 * moment on either side moves one ratio, not the figure.
 */

/** One round's two bursts: events per second each side received. */
export interface BurstPair {
  agent: number;
  informers: number;
}

export interface BurstFigure {
  /** Median of the rounds' ratios, agent over informers. */
  median: number;
  /** Each round's ratio, in the order of the rounds. */
  ratios: number[];
  /** The lowest and highest ratio. */
  spread: [number, number];
  /** Median events per second of each side's bursts. */
  agentPerS: number;
  informersPerS: number;
}

/** The median; for an even count, the mean of the middle two. */
export function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of nothing');
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function burstFigure(pairs: readonly BurstPair[]): BurstFigure {
  const ratios = pairs.map((p) => p.agent / p.informers);
  return {
    median: medianOf(ratios),
    ratios,
    spread: [Math.min(...ratios), Math.max(...ratios)],
    agentPerS: medianOf(pairs.map((p) => p.agent)),
    informersPerS: medianOf(pairs.map((p) => p.informers)),
  };
}
