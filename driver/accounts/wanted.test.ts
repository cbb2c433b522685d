import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AccountRecord, Definition } from '../../shared/accounts/model.ts';
import { agentSourceId } from '../../shared/table/sources/agent-static.ts';
import { wantedBy, wantedFor, type AgentPlace } from './wanted.ts';

const AGENTS = ['a1', 'a2', 'a3'];
const ZONES = ['z', 'y'];

const definition: fc.Arbitrary<[string, Definition]> = fc.oneof(
  fc.constant<[string, Definition]>(['driver-config', { kind: 'driver-config', settings: { kubeconfigFile: '/k/file' }, at: 1 }]),
  fc.constant<[string, Definition]>(['config-server', { kind: 'config-server', settings: { context: 'server' }, at: 2 }]),
  fc.integer({ min: 1, max: 2000 }).map((precedence): [string, Definition] => ['plugin:p', { kind: 'plugin', precedence, settings: { context: 'plugin' }, at: 3 }]),
  fc.record({ agent: fc.constantFrom(...AGENTS), zone: fc.constantFrom(...ZONES), at: fc.integer({ min: 1, max: 9 }) }).map(({ agent, zone, at }): [string, Definition] => [
    agentSourceId(agent),
    { kind: 'static-agent-config', agentId: agent, zoneId: zone, settings: { context: agent }, at },
  ]),
);

const record: fc.Arbitrary<AccountRecord> = fc
  .record({
    defs: fc.array(definition, { maxLength: 4 }),
    registration: fc.option(fc.record({ zoneId: fc.option(fc.constantFrom(...ZONES), { nil: undefined }), at: fc.constant(1) }), { nil: undefined }),
    state: fc.constantFrom('REGISTERED', 'ACTIVE', 'FAILED', 'DEACTIVATED'),
    generation: fc.integer({ min: 0, max: 5 }),
  })
  .map(({ defs, registration, state, generation }) => ({
    name: 'prod',
    version: 1,
    generation,
    defs: Object.fromEntries(defs),
    ...(registration === undefined ? {} : { registration: registration.zoneId === undefined ? { at: 1 } : registration }),
    state,
    agents: {},
    updatedAt: 1,
  }) as AccountRecord);

const place: fc.Arbitrary<AgentPlace> = fc.record({ zone: fc.constantFrom(...ZONES), unzoned: fc.boolean() });

/** The rules of wanted.ts's header, stated on their own. */
function shouldHold(r: AccountRecord, agentId: string, at: AgentPlace): boolean {
  const defs = Object.values(r.defs);
  if (defs.length === 0) return false;
  const own = r.defs[agentSourceId(agentId)];
  const agentWins = defs.every((d) => {
    if (d.kind === 'static-agent-config') return true;
    // Only a plugin below the agent's 1000 beats it (docs/api.md#precedence).
    return !(d.kind === 'plugin' && d.precedence !== undefined && d.precedence < 1000);
  });
  if (agentWins && defs.some((d) => d.kind === 'static-agent-config')) return own !== undefined;
  if (r.registration === undefined || (r.state !== 'ACTIVE' && r.state !== 'FAILED')) return false;
  return r.registration.zoneId !== undefined ? r.registration.zoneId === at.zone : at.unzoned;
}

describe('wantedBy', () => {
  it('names the agents that should hold an account by the rules, and wantedFor builds an assignment for exactly those', () => {
    fc.assert(
      fc.property(record, fc.constantFrom(...AGENTS), place, (r, agentId, at) => {
        const expected = shouldHold(r, agentId, at);
        expect(wantedBy(r)(agentId, at)).toBe(expected);
        expect(wantedFor(r, agentId, at) !== undefined).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });
});
