import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

/**
 * The console takes the API's answer types from the server's schema modules (client/types.ts), and is
 * type-checked without Node's types. A module that pulls in the table client or other Node-only code
 * brings `@types/node` along through the packages it imports, and the check would pass while the
 * console's program held Node's globals: so its program must hold none of it.
 */
it("type-checks the console with none of Node's types in its program", () => {
  const files = execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'functions/console/client/tsconfig.json', '--listFilesOnly'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).split('\n');
  expect(files.some((f) => f.endsWith('functions/console/client/types.ts'))).toBe(true);
  expect(files.filter((f) => f.includes('/@types/node/'))).toEqual([]);
}, 60_000);
