import { describe, expect, it } from 'vitest';
import { tableProfile } from './fleet-table-profile.ts';

const frame = (functionName: string, url: string) => ({ functionName, url });

describe('bench:fleet table profile', () => {
  it("charges each sample to the innermost frame a part claims, passing over Node's buffers and the engine to their caller", () => {
    const D = 'file:///x/node_modules/dynalite';
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 6, 7] },
        { id: 2, callFrame: frame('httpHandler', `${D}/index.js`), children: [3, 5] },
        { id: 3, callFrame: frame('peg$parseStart', `${D}/db/conditionParser.js`), children: [4] },
        { id: 4, callFrame: frame('from', 'node:buffer') },
        { id: 5, callFrame: frame('hashPrefix', `${D}/db/index.js`) },
        { id: 6, callFrame: frame('(garbage collector)', '') },
        { id: 7, callFrame: frame('(idle)', '') },
      ],
      samples: [4, 3, 5, 6, 7, 2],
      timeDeltas: [1000, 1000, 2000, 500, 9000, 500],
    };
    expect(tableProfile(profile)).toEqual({
      busyMs: 5,
      parts: [
        ['expression parsing', 2],
        ['key encoding and hashing', 2],
        ['garbage collection', 0.5],
        ['request handling and JSON parsing', 0.5],
      ],
    });
  });
});
