import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GENERATED_DIR, generateProtocolTypes } from '../../scripts/proto-gen.ts';

function files(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), readFileSync(path, 'utf8'));
  }
  return out;
}

describe('generated protocol types', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'proto-gen-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('are exactly what `npm run proto:gen` produces from the .proto', () => {
    generateProtocolTypes(tmp);
    const fresh = files(tmp);
    const committed = files(GENERATED_DIR);
    expect([...committed.keys()].sort()).toEqual([...fresh.keys()].sort());
    for (const [path, text] of fresh) expect(committed.get(path), path).toBe(text);
  });
});
