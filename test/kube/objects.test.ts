import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonical, canonicalJson, frozenJson, type JsonValue, type KubeObject } from './objects.ts';

const json = fc.jsonValue() as fc.Arbitrary<JsonValue>;
const object = fc.record({
  apiVersion: fc.constant('v1'),
  kind: fc.constant('Pod'),
  metadata: fc.record(
    { name: fc.string(), namespace: fc.string(), resourceVersion: fc.string(), labels: fc.dictionary(fc.string(), fc.string()), managedFields: fc.array(fc.dictionary(fc.string(), json)), extra: json },
    { requiredKeys: [] },
  ),
  spec: fc.dictionary(fc.string(), json),
  status: fc.dictionary(fc.string(), json),
  other: json,
}, { requiredKeys: ['apiVersion', 'kind', 'metadata'] }) as unknown as fc.Arbitrary<KubeObject>;

describe('canonicalJson', () => {
  it('is JSON.stringify of the canonical form, with or without frozen parts', () => {
    fc.assert(fc.property(object, fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }), (obj, freeze) => {
      const expected = JSON.stringify(canonical(obj));
      expect(canonicalJson(obj)).toBe(expected);
      const parts: unknown[] = [obj.spec, obj.status, obj.other, ...Object.values(obj.metadata)];
      for (const s of [obj.status, obj.spec]) if (s !== null && typeof s === 'object') parts.push(...Object.values(s));
      parts.forEach((p, i) => {
        if (freeze[i % freeze.length] === true) frozenJson(p);
      });
      expect(canonicalJson(obj)).toBe(expected);
    }));
  });

  it('puts kind, apiVersion and metadata first and metadata keys in the server order', () => {
    const obj = { spec: { a: 1 }, metadata: { labels: { x: 'y' }, name: 'n', undef: undefined }, kind: 'Pod', apiVersion: 'v1' } as unknown as KubeObject;
    expect(canonicalJson(obj)).toBe('{"kind":"Pod","apiVersion":"v1","metadata":{"name":"n","labels":{"x":"y"}},"spec":{"a":1}}');
  });

  it('freezes what it remembers, so a remembered part can never go stale', () => {
    const spec = frozenJson({ containers: [{ name: 'a' }] });
    expect(() => {
      (spec.containers[0] as { name: string }).name = 'b';
    }).toThrow(TypeError);
  });
});
