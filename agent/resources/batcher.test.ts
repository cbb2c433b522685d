import { describe, expect, it } from 'vitest';
import type { AgentBody } from '../../shared/protocol/messages.ts';
import { Batcher } from './batcher.ts';

const scope = { group: '', kind: 'ConfigMap', namespace: 'a', synthetic: false };
const change = (name: string, rv: string) => ({ group: '', kind: 'ConfigMap', namespace: 'a', name, resourceVersion: rv, deleted: false, object: '{}' });

describe('the batcher', () => {
  it('names in every batch the resume answer it was made under, sealing what was open when a new answer comes', async () => {
    const sent: AgentBody[] = [];
    const batcher = new Batcher({
      account: 'prod',
      cachingEpoch: 3,
      host: { respond: async (b) => void sent.push(b), notify: () => true, connected: () => true },
      onLost: () => undefined,
    });
    void batcher.change(change('before-any', '1'), scope, 1);
    batcher.aligned(7);
    void batcher.change(change('under-7', '2'), scope, 2);
    batcher.progress(scope, '3', 2);
    await batcher.drained();
    batcher.aligned(8);
    batcher.progress(scope, '4', 2);
    await batcher.drained();
    const bodies = sent.map((b) => (b.kind === 'resourceEvents' ? b.body : undefined));
    expect(bodies.map((b) => [b?.resumeQueryId, b?.changes?.map((c) => c.name), b?.progress?.map((p) => p.resourceVersion)])).toEqual([
      [0, ['before-any'], ['1']],
      [7, ['under-7'], ['3']],
      [8, [], ['4']],
    ]);
  });
});
