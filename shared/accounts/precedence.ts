import { AGENT_PRECEDENCE, DRIVER_SOURCE_KINDS, type Definition, type SourceKind } from './model.ts';

/** A plugin with no precedence, and the config file and config server, rank after any explicit value. */
export const UNSET_PRECEDENCE = Number.MAX_SAFE_INTEGER;

// Order among definitions of equal precedence: the agent beats a plugin that merely ties it (rule 4 of
// docs/api.md#precedence: a plugin must beat the agent), and a config server, being managed remotely, beats the local file.
const TIE_ORDER: Record<SourceKind, number> = {
  'static-agent-config': 0,
  plugin: 1,
  'config-server': 2,
  'driver-config': 3,
};

/**
 * Effective precedence of a definition (lower wins). Only plugins carry their own value; the agent has
 * 1000; the config file and config server never beat the agent (rule 3 of docs/api.md#precedence).
 */
export function effectivePrecedence(def: Definition): number {
  if (def.kind === 'static-agent-config') return AGENT_PRECEDENCE;
  if (def.kind === 'plugin' && def.precedence !== undefined) return def.precedence;
  return UNSET_PRECEDENCE;
}

function compare([idA, a]: [string, Definition], [idB, b]: [string, Definition]): number {
  return (
    effectivePrecedence(a) - effectivePrecedence(b) ||
    TIE_ORDER[a.kind] - TIE_ORDER[b.kind] ||
    // Among agents announcing the same static account, the one whose definition changed last wins.
    b.at - a.at ||
    (idA < idB ? -1 : idA > idB ? 1 : 0)
  );
}

/** The definition served for an account, with its source id; undefined when no source defines it. */
export function winningDefinition(defs: Record<string, Definition>): [string, Definition] | undefined {
  // One pass for the first in `compare`'s order: every assignment decision asks, per agent.
  let best: [string, Definition] | undefined;
  for (const id of Object.keys(defs)) {
    const candidate: [string, Definition] = [id, defs[id] as Definition];
    if (best === undefined || compare(candidate, best) < 0) best = candidate;
  }
  return best;
}

/** True when one of the driver service's own sources defines the account (what POST/PATCH/DELETE require). */
export function isDriverDefined(defs: Record<string, Definition>): boolean {
  return Object.values(defs).some((d) => DRIVER_SOURCE_KINDS.includes(d.kind));
}
