import { describe, expect, it } from 'vitest';
import { isLoopback } from './loopback.ts';

describe('loopback addresses', () => {
  it('knows loopback from every other address', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) expect(isLoopback(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.0.2.2', '10.0.0.1', '::ffff:10.0.0.1', 'fd00::1', '::2', '128.0.0.1', '127.0.0.1.example.com', 'example.com', '']) expect(isLoopback(host), host).toBe(false);
  });
});
