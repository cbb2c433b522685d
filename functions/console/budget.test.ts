import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { buildConsole } from '../../scripts/build-console.ts';

/** The console's asset budget (docs/console.md#asset-budget): every asset together, gzipped. */
const BUDGET_BYTES = 200 * 1024;

it(`keeps the built console under ${BUDGET_BYTES / 1024} KB gzipped`, async () => {
  const built = await buildConsole(mkdtempSync(join(tmpdir(), 'console-budget-')));
  const sizes = built.files.map((name) => ({ name, gzip: gzipSync(readFileSync(join(built.dir, 'assets', name)), { level: 9 }).length }));
  const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
  expect(total, JSON.stringify(sizes)).toBeGreaterThan(0);
  expect(total, `the console's assets are ${total} bytes gzipped: ${JSON.stringify(sizes)}`).toBeLessThanOrEqual(BUDGET_BYTES);
}, 60_000);
