import { describe, expect, it } from 'vitest';
import { jsonTextTooDeep, valueTooDeep } from './json-depth.ts';

describe('JSON depth without recursion', () => {
  it('measures text by its brackets outside strings, at any depth', () => {
    expect(jsonTextTooDeep('[[[]]]', 3)).toBe(false);
    expect(jsonTextTooDeep('[[[[]]]]', 3)).toBe(true);
    expect(jsonTextTooDeep('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    expect(jsonTextTooDeep('{"a":{"b":[1,{"c":{}}]}}', 4)).toBe(true);
    expect(jsonTextTooDeep('["[[[[[[", "\\"[[[[[", "\\\\", []]', 2)).toBe(false);
    expect(jsonTextTooDeep('[]'.repeat(1000), 1)).toBe(false);
    expect(jsonTextTooDeep('['.repeat(1_000_000), 64)).toBe(true);
  });

  it('measures parsed values with a stack of its own', () => {
    expect(valueTooDeep({ a: [1, { b: 'x' }] }, 3)).toBe(false);
    expect(valueTooDeep({ a: [1, { b: {} }] }, 3)).toBe(true);
    expect(valueTooDeep('scalar', 0)).toBe(false);
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(valueTooDeep(deep)).toBe(true);
  });
});
