import { describe, expect, it } from 'vitest';
import type { AgentIdentity } from '../shared/agents/identity.ts';
import { helloRefusal } from './hello-policy.ts';

const identity: AgentIdentity = { name: 'team-a', zones: ['a_*'], unzoned: false, agentIds: ['a-*'], staticAccounts: ['team-a-*', 'legacy'] };
const hello = (over: { agentId?: string; zone?: string; statics?: string[] } = {}) => ({
  agentId: over.agentId ?? 'a-1',
  zone: over.zone ?? 'a_ns',
  staticAccounts: (over.statics ?? []).map((name) => ({ name, settings: null })),
});

describe('helloRefusal', () => {
  it('allows what the identity allows', () => {
    expect(helloRefusal(identity, hello({ statics: ['team-a-1', 'legacy'] }))).toBeUndefined();
  });

  it('refuses another zone, another agent id, and static names the identity does not allow, naming them', () => {
    expect(helloRefusal(identity, hello({ zone: 'b_ns' }))).toEqual({ claim: 'zone', message: 'identity team-a may not serve zone "b_ns"' });
    expect(helloRefusal(identity, hello({ zone: '' }))?.claim).toBe('zone');
    expect(helloRefusal(identity, hello({ agentId: 'b-1' }))).toEqual({ claim: 'agentId', message: 'identity team-a may not use agent id "b-1"' });
    expect(helloRefusal(identity, hello({ statics: ['team-a-1', 'prod', 'prod'] }))).toEqual({
      claim: 'staticAccounts',
      message: 'identity team-a may not define static account "prod"',
      names: ['prod'],
    });
  });
});
