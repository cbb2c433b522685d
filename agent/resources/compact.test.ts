import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { COMPACT_TARGET_BYTES, compactObject } from './compact.ts';

const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }];

describe('the compact form', () => {
  it('keeps metadata essentials and never managedFields or the last-applied annotation', () => {
    const c = JSON.parse(
      compactObject(
        {
          metadata: {
            name: 'web',
            namespace: 'shop',
            uid: 'u-1',
            resourceVersion: '42',
            generation: 3,
            creationTimestamp: '2024-05-01T10:00:00Z',
            labels: { app: 'web' },
            annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"big":true}', 'moniker.spinnaker.io/application': 'web' },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u-0', controller: true }],
            managedFields,
          },
          spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'app', image: 'web:1', env: [{ name: 'X', value: 'y' }] }] } } },
          status: { replicas: 3, readyReplicas: 2, conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'long' }] },
        },
        'Deployment',
        'apps',
        'apps/v1',
      ).json,
    );
    expect(c).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'web',
        namespace: 'shop',
        uid: 'u-1',
        resourceVersion: '42',
        generation: 3,
        creationTimestamp: '2024-05-01T10:00:00Z',
        labels: { app: 'web' },
        annotations: { 'moniker.spinnaker.io/application': 'web' },
        ownerReferences: [{ kind: 'ReplicaSet', name: 'web-1', controller: true }],
      },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { spec: { containers: [{ name: 'app', image: 'web:1' }] } } },
      status: { replicas: 3, readyReplicas: 2, conditions: [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }] },
    });
  });

  it('never carries the values of secrets or config maps, only their keys', () => {
    const secret = compactObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'Opaque', data: { password: 'c2VjcmV0LXZhbHVl' }, stringData: { token: 'plain-secret' } }, 'Secret', '');
    expect(secret.json).not.toContain('c2VjcmV0LXZhbHVl');
    expect(secret.json).not.toContain('plain-secret');
    expect(JSON.parse(secret.json)).toMatchObject({ type: 'Opaque', dataKeys: ['password', 'token'] });
    const cm = compactObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { 'app.yaml': 'db: secret-host' } }, 'ConfigMap', '');
    expect(cm.json).not.toContain('secret-host');
    expect(JSON.parse(cm.json)).toMatchObject({ dataKeys: ['app.yaml'] });
  });

  it('summarizes a pod: containers, phase, readiness and restarts', () => {
    const c = JSON.parse(
      compactObject(
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', namespace: 'n' },
          spec: { nodeName: 'node-1', containers: [{ name: 'a', image: 'a:1', resources: {} }, { name: 'b', image: 'b:1' }] },
          status: {
            phase: 'Running',
            podIP: '10.0.0.1',
            containerStatuses: [
              { name: 'a', ready: true, restartCount: 2, state: { running: {} } },
              { name: 'b', ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } },
            ],
          },
        },
        'Pod',
        '',
      ).json,
    );
    expect(c.spec).toEqual({ nodeName: 'node-1', containers: [{ name: 'a', image: 'a:1' }, { name: 'b', image: 'b:1' }] });
    expect(c.status).toEqual({ phase: 'Running', podIP: '10.0.0.1', ready: '1/2', restarts: 3, waiting: [{ name: 'b', reason: 'CrashLoopBackOff' }] });
  });

  it('keeps a small custom resource whole and a large one as scalars and conditions', () => {
    const small = JSON.parse(compactObject({ apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3, tags: ['a'] } }, 'Widget', 'x.io').json);
    expect(small.spec).toEqual({ size: 3, tags: ['a'] });
    const big = JSON.parse(
      compactObject(
        { apiVersion: 'x.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3, blob: 'x'.repeat(2000) }, status: { phase: 'Ready', conditions: [{ type: 'Ready', status: 'True', message: 'm'.repeat(400) }], detail: { a: 1 } } },
        'Widget',
        'x.io',
      ).json,
    );
    expect(big.spec).toEqual({ size: 3 });
    expect(big.status).toEqual({ phase: 'Ready', conditions: [{ type: 'Ready', status: 'True' }] });
  });

  it('cuts annotations, then labels, to stay near the target size', () => {
    const annotations = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`example.com/note-${i}`, 'n'.repeat(60)]));
    annotations['artifact.spinnaker.io/name'] = 'web';
    const labels = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`label-${i}`, 'v'.repeat(30)]));
    const c = compactObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations, labels } }, 'ConfigMap', '');
    expect(c.trimmed).toBe(true);
    const parsed = JSON.parse(c.json);
    expect(parsed.trimmed).toBe(true);
    expect(parsed.metadata.annotations).toEqual({ 'artifact.spinnaker.io/name': 'web' });
    expect(Object.keys(parsed.metadata.labels)).toHaveLength(8);
    const plain = compactObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 'b' } } }, 'ConfigMap', '');
    expect(plain.trimmed).toBe(false);
    expect(plain.json.length).toBeLessThan(COMPACT_TARGET_BYTES);
  });
});

describe('labels and annotations in the compact form', () => {
  // Small enough that nothing is trimmed (the target size is tested above).
  it('are the object maps as JSON, in their order, whatever their keys', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }), fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 4 }), (labels, annotations) => {
        const c = JSON.parse(compactObject({ metadata: { name: 'x', labels, annotations } }, 'Widget', 'example.com', 'example.com/v1').json) as { metadata: { labels?: object; annotations?: object } };
        const expected = (m: Record<string, string>) => (Object.keys(m).length === 0 ? undefined : JSON.stringify(m));
        expect(c.metadata.labels === undefined ? undefined : JSON.stringify(c.metadata.labels)).toBe(expected(labels));
        expect(c.metadata.annotations === undefined ? undefined : JSON.stringify(c.metadata.annotations)).toBe(expected(annotations));
      }),
    );
  });
});
