import { describe, expect, it } from 'vitest';
import { VendorError, isVendorError } from './errors.ts';

describe('VendorError', () => {
  it('carries a stable code, issues and details', () => {
    const err = new VendorError('invalid_input', 'bad body', {
      issues: [{ path: '[0].name', message: 'required' }],
      details: { names: ['a'] },
    });
    expect(err.code).toBe('invalid_input');
    expect(err.issues).toEqual([{ path: '[0].name', message: 'required' }]);
    expect(err.details).toEqual({ names: ['a'] });
    expect(isVendorError(err)).toBe(true);
    expect(isVendorError(new Error('x'))).toBe(false);
  });
});
