import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import type { AgentMessage } from '../../shared/protocol/messages.ts';
import { encodeAgentMessage } from './resource-events-wire.ts';

const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
const serialize = (m: AgentMessage) => connect.requestSerialize(m);
const decode = (b: Buffer) => connect.requestDeserialize(b);

const text = fc.oneof(fc.constant(''), fc.string(), fc.string({ unit: 'grapheme' }), fc.string({ minLength: 100, maxLength: 3000 }));
const change = fc.record({ group: text, kind: text, namespace: text, name: text, resourceVersion: text, deleted: fc.boolean(), object: text }, { requiredKeys: [] });
const scope = fc.record({ group: text, kind: text, namespace: text, synthetic: fc.boolean() });
const message = fc.record({
  seq: fc.nat(),
  ackSeq: fc.nat(),
  resourceEvents: fc.record({
    account: text,
    cachingEpoch: fc.nat(),
    changes: fc.array(change, { maxLength: 40 }),
    syncs: fc.array(fc.record({ scope, resourceVersion: text, listId: fc.nat(), part: fc.nat(), last: fc.boolean(), keys: fc.array(text, { maxLength: 5 }) }), { maxLength: 3 }),
    progress: fc.array(fc.record({ scope, resourceVersion: text, objects: fc.nat() }), { maxLength: 3 }),
    health: fc.array(fc.record({ group: text, kind: text, scopes: fc.nat(), watching: fc.nat() }), { maxLength: 2 }),
    resumeQueryId: fc.nat(),
  }, { requiredKeys: ['changes'] }),
});

describe('the wire form of resource events', () => {
  it('decodes to exactly what the generic encoder gives, for any batch', () => {
    fc.assert(
      fc.property(message, (m) => {
        expect(decode(encodeAgentMessage(m, serialize))).toEqual(decode(serialize(m)));
      }),
      { numRuns: 300 },
    );
  });

  it('writes a realistic batch by hand: a pod change of 800 bytes, a deletion, multi-byte text', () => {
    const pod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop', labels: { app: 'wéb ☃' } }, spec: { x: 'y'.repeat(700) } });
    const m: AgentMessage = {
      seq: 300,
      ackSeq: 12,
      resourceEvents: {
        account: 'prod',
        cachingEpoch: 3,
        resumeQueryId: 7,
        changes: [
          { group: '', kind: 'Pod', namespace: 'shop', name: 'web-0', resourceVersion: '123456', deleted: false, object: pod },
          { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web', resourceVersion: '123457', deleted: true, object: '' },
        ],
        progress: [{ scope: { group: '', kind: 'Pod', namespace: '' }, resourceVersion: '123457', objects: 2 }],
      },
    };
    const bytes = encodeAgentMessage(m, serialize);
    expect(decode(bytes)).toEqual(decode(serialize(m)));
    expect(decode(bytes).resourceEvents?.changes.map((c) => [c.name, c.deleted, c.object.length])).toEqual([['web-0', false, pod.length], ['web', true, 0]]);
    // Nothing added: the generic encoder's size, less the defaults it writes and this leaves out (the
    // core group, `deleted: false`, the deletion's empty object: 2 bytes each), which decode the same.
    expect(bytes.length).toBe(serialize(m).length - 6);
  });

  it('leaves messages without changes to the generic encoder', () => {
    const m: AgentMessage = { seq: 1, ackSeq: 0, heartbeat: {} } as AgentMessage;
    expect(encodeAgentMessage(m, serialize)).toEqual(serialize(m));
    const empty: AgentMessage = { seq: 2, ackSeq: 1, resourceEvents: { account: 'prod', changes: [] } };
    expect(encodeAgentMessage(empty, serialize)).toEqual(serialize(empty));
  });
});
