import { describe, expect, it } from 'vitest';
import { decodeLine, decodeList } from './decode.ts';
import { threadDecoder } from './decoder.ts';

const info = { kind: 'ConfigMap', group: '', apiVersion: 'v1' };
const cm = (name: string, rv: string) => ({ metadata: { name, namespace: 'n', resourceVersion: rv, managedFields: [{ manager: 'x' }] }, data: { k: 'secret-ish' } });

describe('decoding watch lines and list pages', () => {
  it('gives each event its key, version and compact form', () => {
    expect(decodeLine(JSON.stringify({ type: 'MODIFIED', object: cm('a', '7') }), info)).toEqual({
      type: 'MODIFIED',
      namespace: 'n',
      name: 'a',
      resourceVersion: '7',
      compact: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","resourceVersion":"7"},"dataKeys":["k"]}',
    });
    expect(decodeLine(JSON.stringify({ type: 'DELETED', object: cm('a', '8') }), info)).toEqual({ type: 'DELETED', namespace: 'n', name: 'a', resourceVersion: '8' });
    expect(decodeLine(JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } } }), info)).toMatchObject({
      type: 'BOOKMARK',
      resourceVersion: '9',
      initialEventsEnd: true,
    });
    const status = { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' };
    expect(decodeLine(JSON.stringify({ type: 'ERROR', object: status }), info)).toMatchObject({ type: 'ERROR', status: { code: 410, body: JSON.stringify(status) } });
    expect(decodeLine('{"type":', info)).toMatchObject({ malformed: true });
  });

  it('reads a list page with its version and continue token', () => {
    const page = decodeList(JSON.stringify({ metadata: { resourceVersion: '12', continue: 'abc' }, items: [cm('a', '3'), cm('b', '4')] }), info);
    expect(page).toMatchObject({ resourceVersion: '12', continue: 'abc' });
    expect(page.items.map((i) => [i.type, i.name, i.resourceVersion])).toEqual([['ITEM', 'a', '3'], ['ITEM', 'b', '4']]);
    expect(decodeList(JSON.stringify({ metadata: { resourceVersion: '12', continue: '' }, items: [] }), info)).toEqual({ resourceVersion: '12', items: [] });
  });

  it('decodes the same in threads, answers in order, and reports a page that is not JSON', async () => {
    const decoder = threadDecoder(2);
    try {
      // Large enough to go to the threads.
      const lines = Array.from({ length: 400 }, (_, i) => JSON.stringify({ type: 'ADDED', object: { ...cm(`c${i}`, String(i)), pad: 'x'.repeat(200) } }));
      const batch = (ls: string[]) => Buffer.from(`${ls.join('\n')}\n`);
      const answers = await Promise.all([decoder.batch(batch(lines.slice(0, 200)), info), decoder.batch(batch(lines.slice(200)), info), decoder.batch(batch(['{"type":"DELETED","object":{"metadata":{"name":"small"}}}']), info)]);
      expect(answers.flat().map((d) => d.name)).toEqual([...lines.map((_, i) => `c${i}`), 'small']);
      expect(answers.flat()[3]).toEqual(decodeLine(lines[3]!, info));
      await expect(decoder.list('not json', info)).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/^decoding failed: /) });
    } finally {
      await decoder.close();
    }
    await expect(decoder.list('{}', info)).rejects.toThrow('the decoder is closed');
  });
});
