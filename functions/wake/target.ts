/** The agents some work is for: those of a zone (every zone when undefined), or of it only `agents` when any of them is live. */
export interface WakeTarget {
  zone: string | undefined;
  agents?: readonly string[];
}
