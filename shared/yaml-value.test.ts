import { parseDocument } from 'yaml';
import { describe, expect, it } from 'vitest';
import { yamlValue } from './yaml-value.ts';

describe('yamlValue', () => {
  it('reads a document as plain data, aliases resolved', () => {
    expect(yamlValue(parseDocument('a: &x [1, 2]\nb: *x\n'))).toEqual({ value: { a: [1, 2], b: [1, 2] } });
  });

  it('names what keeps a parsed document from being read, without quoting it', () => {
    expect(yamlValue(parseDocument('token: *SECRET_VALUE\n'))).toEqual({ problem: 'an alias names no anchor set before it' });
    expect(yamlValue(parseDocument('a: &x [1, 2, 3]\nb: [*x, *x, *x]\n'), 2)).toEqual({ problem: 'its aliases expand to more than 2 nodes' });
    expect(yamlValue(parseDocument('a: &x [1, 2, 3]\nb: [*x, *x, *x]\n'), 100)).toEqual({ value: { a: [1, 2, 3], b: [[1, 2, 3], [1, 2, 3], [1, 2, 3]] } });
  });
});
