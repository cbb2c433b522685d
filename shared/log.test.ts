import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log.ts';

function tempFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'log-')), 'out.log');
}

describe('createLogger', () => {
  it('writes JSON lines with base fields and redacts secret-named fields', () => {
    const file = tempFile();
    const log = createLogger({ file, format: 'json', base: { agentId: 'a1' } });
    log.info({ account: 'prod', token: 's3cr3t', auth: { password: 'p4ss' } }, 'hello');
    const line = JSON.parse(readFileSync(file, 'utf8').trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', msg: 'hello', agentId: 'a1', account: 'prod', token: '[redacted]' });
    expect(JSON.stringify(line)).not.toContain('s3cr3t');
    expect(JSON.stringify(line)).not.toContain('p4ss');
  });

  it('writes text lines and honours the level', () => {
    const file = tempFile();
    const log = createLogger({ file, format: 'text', level: 'warn' });
    log.info('hidden');
    log.warn({ account: 'prod' }, 'shown');
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('hidden');
    expect(text).toMatch(/^\S+ WARN shown account=prod\n$/);
  });

  it('reports every child logger, at any depth, to onChild', () => {
    const seen: unknown[] = [];
    const log = createLogger({ file: tempFile(), onChild: (child) => seen.push(child) });
    const child = log.child({ account: 'prod' });
    const grandchild = child.child({ component: 'cache' });
    expect(seen).toEqual([child, grandchild]);
  });
});
