import { describe, expect, it } from 'vitest';
import { summarizeProfile } from './deployed-profile.ts';

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });
const ROOT = 'file:///srv/vendor-agent';

describe('deployed-profile', () => {
  it('charges Node internals to the package that called them, our functions with what they call, and leaves module loading out', () => {
    const profile = {
      nodes: [
        frame(1, '(root)', '', [2, 3, 8, 9]),
        frame(2, 'main', `${ROOT}/driver/main.ts`, [4]),
        frame(3, '(idle)', ''),
        frame(4, 'recordResult', `${ROOT}/driver/operations/dispatcher.ts`, [5]),
        frame(5, 'signRequest', `${ROOT}/node_modules/@smithy/signature-v4/dist-cjs/index.js`, [6]),
        frame(6, 'createHmac', 'node:crypto', [7]),
        frame(7, 'getKeyObjectSlots', 'node:internal/crypto/keys'),
        frame(8, 'compileSourceTextModule', 'node:internal/modules/esm/utils'),
        frame(9, '(garbage collector)', ''),
      ],
      samples: [7, 7, 6, 4, 3, 8, 9],
      timeDeltas: [1000, 1000, 1000, 2000, 50_000, 9000, 500],
    };
    const p = summarizeProfile('x.cpuprofile', profile);
    expect(p.process).toBe('replica');
    expect(p.loadingMs).toBe(9);
    expect(p.busyMs).toBe(5.5);
    expect(p.byPackage).toEqual([
      ['@smithy/signature-v4', 3],
      ['ours: driver/operations', 2],
      ['(garbage collector)', 0.5],
    ]);
    expect(p.byOwnFunction).toEqual([['driver/operations/dispatcher.ts: recordResult', 5]]);
  });
});
