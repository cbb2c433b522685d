import { describe, expect, it } from 'vitest';
import { parseDriverFile } from '../config.ts';
import { checkDriverText } from '../validate.ts';
import { DEFAULT_WAKE_PORT } from './config.ts';

describe('wake of vendor-driver.yml', () => {
  it('defaults to an endpoint on every interface at the default port, taken only with a secret', () => {
    expect(parseDriverFile('{}', 'vendor-driver.yml').wake).toEqual({ enabled: true, host: '0.0.0.0', port: DEFAULT_WAKE_PORT, maxAgeMs: 30_000, maxPerSecond: 200, results: true, resultHoldMs: 20_000, maxResultAsksPerSecond: 1_000, maxResultWaiters: 1_000 });
    expect(parseDriverFile('wake: { enabled: false }', 'vendor-driver.yml').wake.enabled).toBe(false);
  });

  it('is checked by validate, each problem at its key path', () => {
    const checked = checkDriverText('wake:\n  port: 70000\n  maxAgeMs: 10\n  maxPerSecond: 0\n  secret: nope\n', 'vendor-driver.yml');
    expect(checked.config).toBeUndefined();
    const paths = checked.problems.map((p) => p.path).sort();
    expect(paths).toEqual(['wake.maxAgeMs', 'wake.maxPerSecond', 'wake.port', 'wake.secret']);
    // A secret does not belong in the file: it is refused, and its value is not repeated.
    expect(JSON.stringify(checked.problems)).not.toContain('nope');
  });

  it('checks the result-ask keys by validate too', () => {
    const checked = checkDriverText('wake:\n  results: maybe\n  resultHoldMs: 10\n  maxResultAsksPerSecond: 0\n  maxResultWaiters: 0\n', 'vendor-driver.yml');
    expect(checked.config).toBeUndefined();
    expect(checked.problems.map((p) => p.path).sort()).toEqual(['wake.maxResultAsksPerSecond', 'wake.maxResultWaiters', 'wake.resultHoldMs', 'wake.results']);
  });
});
