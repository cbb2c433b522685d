import { describe, expect, it } from 'vitest';
import { restoreEnvironment } from './environment.ts';

describe('the environment a test file leaves behind', () => {
  it('is put back as it was: added variables removed, changed and removed ones restored', () => {
    const env: NodeJS.ProcessEnv = { KEPT: 'k', CHANGED: 'before', REMOVED: 'r' };
    const before = { ...env };
    env.ADDED = 'a';
    env.CHANGED = 'after';
    delete env.REMOVED;
    restoreEnvironment(env, before);
    expect(env).toEqual({ KEPT: 'k', CHANGED: 'before', REMOVED: 'r' });
  });
});
