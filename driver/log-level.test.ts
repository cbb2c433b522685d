import { describe, expect, it } from 'vitest';
import { logLevelFromEnv } from './main.ts';

describe('VENDOR_LOG_LEVEL (docs/protocol.md)', () => {
  it('takes a level by name and keeps info for anything else', () => {
    expect(logLevelFromEnv('debug')).toBe('debug');
    expect(logLevelFromEnv('silent')).toBe('silent');
    expect(logLevelFromEnv(undefined)).toBe('info');
    expect(logLevelFromEnv('')).toBe('info');
    expect(logLevelFromEnv('verbose')).toBe('info');
  });
});
