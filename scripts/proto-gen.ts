/**
 * Regenerates the TypeScript types of the agent protocol (`npm run proto:gen`).
 *
 * Types come from `proto-loader-gen-types` with the loader's own options, so they describe what
 * `@grpc/proto-loader` produces at run time. `--importFileExtension=.ts` makes the generated
 * relative imports carry the `.ts` suffix that `module: nodenext` with type stripping wants, so
 * the output passes our tsc settings untouched and needs no post-processing.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOADER_OPTIONS } from '../shared/protocol/options.ts';
import { AGENT_PROTO, PROTO_ROOT } from '../shared/protocol/loader.ts';

const REPO_ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const GENERATED_DIR = join(PROTO_ROOT, 'generated');

/** Writes the generated types of the agent protocol into `outDir`, replacing what was there. */
export function generateProtocolTypes(outDir: string = GENERATED_DIR): void {
  const require = createRequire(import.meta.url);
  const cli = join(dirname(require.resolve('@grpc/proto-loader/package.json')), 'build/bin/proto-loader-gen-types.js');
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      cli,
      `--longs=${LOADER_OPTIONS.longs.name}`,
      `--enums=${LOADER_OPTIONS.enums.name}`,
      ...(LOADER_OPTIONS.keepCase ? ['--keepCase'] : []),
      ...(LOADER_OPTIONS.defaults ? ['--defaults'] : []),
      ...(LOADER_OPTIONS.oneofs ? ['--oneofs'] : []),
      '--includeComments',
      '--grpcLib=@grpc/grpc-js',
      '--importFileExtension=.ts',
      `--outDir=${outDir}`,
      // Relative to the repository so the "Original file" line in each output is the same everywhere.
      relative(REPO_ROOT, join(PROTO_ROOT, AGENT_PROTO)),
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  generateProtocolTypes();
  console.log(`generated ${relative(REPO_ROOT, GENERATED_DIR)}`);
}
