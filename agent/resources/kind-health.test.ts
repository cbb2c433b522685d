import { describe, expect, it } from 'vitest';
import { MAX_HEALTH_KINDS } from '../../shared/protocol/validate.ts';
import { healthMessage, type KindSummary } from './kind-health.ts';

const kind = (over: Partial<KindSummary> = {}): KindSummary => ({ group: 'apps', kind: 'Deployment', scopes: 1, watching: 1, objects: 3, bytes: 900, relists: 1, expired: 0, lastError: '', ...over });

describe('the health report as sent', () => {
  it('leaves out a kind the driver would refuse, so that the batch it is in is taken with its changes', () => {
    const sent = healthMessage([kind(), kind({ kind: '' }), kind({ kind: 'K'.repeat(257) }), kind({ group: 'g'.repeat(254) }), kind({ kind: 'Job', group: 'batch' })], 1_000);
    expect(sent.map((k) => `${k.kind}.${k.group}`)).toEqual(['Deployment.apps', 'Job.batch']);
  });

  it(`names at most ${MAX_HEALTH_KINDS} kinds`, () => {
    const sent = healthMessage(Array.from({ length: MAX_HEALTH_KINDS + 5 }, (_, i) => kind({ kind: `K${i}` })), 1_000);
    expect(sent).toHaveLength(MAX_HEALTH_KINDS);
  });
});
