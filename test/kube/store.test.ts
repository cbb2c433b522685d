import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from './objects.ts';
import { BUILTIN_RESOURCES, type ResourceType } from './resource-types.ts';
import { Store } from './store.ts';

const configmaps = BUILTIN_RESOURCES.find((r) => r.plural === 'configmaps') as ResourceType;

type Op = { kind: 'put'; ns: string; name: string; value: number } | { kind: 'remove'; ns: string; name: string } | { kind: 'compact' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('put' as const), ns: fc.constantFrom('a', 'b', 'a-b'), name: fc.constantFrom('x', 'y', 'z', 'x1'), value: fc.nat(9) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), ns: fc.constantFrom('a', 'b', 'a-b'), name: fc.constantFrom('x', 'y', 'z', 'x1') }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'compact' as const }) },
);

function cm(ns: string, name: string, value: number): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { v: String(value) } }, data: { v: String(value) } };
}

type State = Map<string, number>;

function listed(store: Store, atRv: number, namespace?: string, limit?: number): string[] {
  const out: string[] = [];
  let startKey: string | undefined;
  for (;;) {
    const page = store.page(configmaps, { namespace, atRv, startKey, limit });
    for (const r of page.items) {
      const o = JSON.parse(r.json as string) as KubeObject;
      out.push(`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}=${String((o.data as { v: string }).v)}`);
    }
    if (page.lastKey === undefined) return out;
    startKey = `${page.lastKey}\u0000`;
  }
}

function render(state: State, namespace?: string): string[] {
  return [...state]
    .filter(([k]) => namespace === undefined || k.startsWith(`${namespace}/`))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
}

describe('Store', () => {
  it('reads any retained revision exactly, pages in key order, and replays events onto old snapshots', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), fc.integer({ min: 1, max: 4 }), (ops, limit) => {
        const store = new Store({ maxRevisions: Infinity });
        const state: State = new Map();
        const snapshots = new Map<number, State>([[0, new Map()]]);
        for (const op of ops) {
          const key = op.kind === 'compact' ? '' : `${op.ns}/${op.name}`;
          if (op.kind === 'put') {
            store.put(configmaps, cm(op.ns, op.name, op.value));
            state.set(key, op.value);
          } else if (op.kind === 'remove') {
            const removed = store.remove(configmaps, cm(op.ns, op.name, 0));
            expect(removed === undefined).toBe(!state.has(key));
            state.delete(key);
          } else store.compact();
          snapshots.set(store.resourceVersion, new Map(state));
        }
        expect(listed(store, store.resourceVersion)).toEqual(render(state));
        expect(listed(store, store.resourceVersion, 'a', limit)).toEqual(render(state, 'a'));
        expect(store.count(configmaps)).toBe(state.size);
        for (const [rv, snap] of snapshots) {
          if (rv < store.compactedResourceVersion) {
            expect(store.eventsAfter(configmaps, rv)).toBeUndefined();
            continue;
          }
          expect(listed(store, rv, undefined, limit)).toEqual(render(snap));
          const replayed = new Map(snap);
          for (const e of store.eventsAfter(configmaps, rv) ?? []) {
            const k = `${e.namespace}/${e.name}`;
            if (e.type === 'DELETED') replayed.delete(k);
            else replayed.set(k, Number((JSON.parse(e.json) as { data: { v: string } }).data.v));
          }
          expect(render(replayed)).toEqual(render(state));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('compacts automatically past the retained window and forgets deleted keys', () => {
    const store = new Store({ maxRevisions: 10 });
    for (let i = 0; i < 2000; i++) store.put(configmaps, cm('a', `o${i % 5}`, i % 10));
    for (let i = 0; i < 5; i++) store.remove(configmaps, cm('a', `o${i}`, 0));
    expect(store.compactedResourceVersion).toBeGreaterThan(1000);
    expect(store.resourceVersion - store.compactedResourceVersion).toBeLessThanOrEqual(10 + 1000);
    store.compact();
    expect(store.page(configmaps, { atRv: store.resourceVersion }).items).toEqual([]);
    expect(store.eventsAfter(configmaps, store.resourceVersion)).toEqual([]);
  });

  it('delivers each event to subscribers of its namespace and of all namespaces only', () => {
    const store = new Store({ maxRevisions: Infinity });
    const seen: Record<string, string[]> = { a: [], b: [], all: [] };
    store.subscribe(configmaps, { namespace: 'a', deliver: (e) => seen.a?.push(e.name) });
    const stopB = store.subscribe(configmaps, { namespace: 'b', deliver: (e) => seen.b?.push(e.name) });
    store.subscribe(configmaps, { namespace: null, deliver: (e) => seen.all?.push(`${e.namespace}/${e.name}`) });
    store.put(configmaps, cm('a', 'x', 1));
    store.put(configmaps, cm('b', 'y', 1));
    stopB();
    store.put(configmaps, cm('b', 'z', 1));
    expect(seen).toEqual({ a: ['x'], b: ['y'], all: ['a/x', 'b/y', 'b/z'] });
  });
});
