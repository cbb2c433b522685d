import { describe, expect, it } from 'vitest';
import type { AgentBody } from '../../shared/protocol/messages.ts';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import { parseAgentMessage } from '../../shared/protocol/validate.ts';
import { Batcher, type BatcherOptions } from './batcher.ts';

const scope = { group: '', kind: 'ConfigMap', namespace: 'a', synthetic: false };
const change = (name: string, rv: string) => ({ group: '', kind: 'ConfigMap', namespace: 'a', name, resourceVersion: rv, deleted: false, object: '{}' });

/** A batcher of account `prod` whose every batch lands in `sent` at once. */
const sendingTo = (sent: AgentBody[], options: Partial<BatcherOptions> = {}) =>
  new Batcher({ account: 'prod', cachingEpoch: 3, host: { respond: async (b) => void sent.push(b), notify: () => true, connected: () => true }, onLost: () => undefined, ...options });

describe('the batcher', () => {
  it('names in every batch the resume answer it was made under, sealing what was open when a new answer comes', async () => {
    const sent: AgentBody[] = [];
    const batcher = sendingTo(sent);
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

  it('leaves out an object the driver would refuse, so the batch it is in is taken whole', async () => {
    const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
    const sent: AgentBody[] = [];
    const leftOut: string[] = [];
    const batcher = sendingTo(sent, { onLeftOut: (c, problem) => leftOut.push(`${c.name.slice(0, 8)}: ${problem}`) });
    // A ClusterRole's name is any path segment: Kubernetes takes one of 300 characters, or of wide ones.
    void batcher.change(change('kept-1', '1'), scope, 1);
    void batcher.change(change('r'.repeat(300), '2'), scope, 2);
    void batcher.change({ ...change('界'.repeat(256), '3'), kind: '世'.repeat(100) }, scope, 3);
    void batcher.change(change('kept-2', '4'), scope, 4);
    await batcher.drained();
    expect(leftOut).toEqual(['rrrrrrrr: name is longer than 256 characters', '界界界界界界界界: group, kind, namespace and name together make a table key longer than 1024 bytes']);
    expect(sent).toHaveLength(1);
    const wire = connect.requestDeserialize(connect.requestSerialize({ seq: 1, [sent[0]!.kind]: sent[0]!.body }));
    const env = parseAgentMessage(wire);
    expect(env.kind === 'resourceEvents' && env.body.changes.map((c) => c.name)).toEqual(['kept-1', 'kept-2']);
  });
});
