import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_VERSION } from './version.ts';

describe('AGENT_VERSION', () => {
  it('is the version of package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(AGENT_VERSION).toBe(pkg.version);
  });
});
