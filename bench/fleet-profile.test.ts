import { describe, expect, it } from 'vitest';
import { bySteps, processOf } from './fleet-profile.ts';

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });
const ROOT = 'file:///srv/vendor-agent';

describe('fleet-profile', () => {
  it('charges each sample to the step of its innermost named frame, JSON at the top to JSON, and leaves module loading out', () => {
    const profile = {
      nodes: [
        frame(1, '(root)', '', [2, 3, 10, 11, 12]),
        frame(2, 'assignmentResult', `${ROOT}/driver/accounts/module.ts`, [4, 6, 8]),
        frame(3, '(idle)', ''),
        frame(4, 'write', `${ROOT}/node_modules/pino/lib/proto.js`, [5]),
        frame(5, 'writeSync', 'node:fs'),
        frame(6, 'planAccount', `${ROOT}/driver/accounts/plan.ts`, [7]),
        frame(7, 'parse', ''),
        frame(8, 'send', `${ROOT}/node_modules/@smithy/core/dist-cjs/index.js`, [9]),
        frame(9, 'Hmac', 'node:internal/crypto/hash'),
        frame(10, 'compileSourceTextModule', 'node:internal/modules/esm/utils'),
        frame(11, '(garbage collector)', ''),
        frame(12, 'driverMain', `${ROOT}/driver/main.ts`, [13]),
        frame(13, 'socketOnData', 'node:net'),
      ],
      samples: [5, 5, 7, 9, 9, 9, 3, 10, 11, 2, 13],
      timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 50_000, 9000, 500, 1000, 2000],
    };
    expect(processOf(profile)).toBe('replica');
    const { busyMs, steps } = bySteps(profile);
    expect(busyMs).toBe(9.5);
    expect(steps).toEqual([
      ['table client (SDK, signing, HTTP)', 3],
      ['logs', 2],
      ['node: sockets, streams, microtasks', 2],
      ['JSON', 1],
      ['reconciler and account items', 1],
      ['garbage collection', 0.5],
    ]);
  });
});
