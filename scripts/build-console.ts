/**
 * Builds the web console (docs/console.md): the browser sources of functions/console/client bundled
 * and minified by esbuild into hashed files under functions/console/dist/assets, with manifest.json
 * naming them, where the API reads them (functions/console/asset-store.ts). `npm start` and `npm test`
 * run it first; `npm run build:console` runs it alone.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
export const CONSOLE_SOURCE = join(ROOT, 'functions/console/client');
export const CONSOLE_OUT = join(ROOT, 'functions/console/dist');

/** What the browser may run: current evergreen browsers (ES2022 modules). */
const TARGETS = ['chrome115', 'firefox115', 'safari16', 'edge115'];

export interface BuiltConsole {
  dir: string;
  script: string;
  style: string;
  icon: string;
  files: string[];
}

/** Writes `path` whole or not at all (a rename), so a server reading it during a concurrent build never reads half a file. */
function writeAtomically(path: string, body: Uint8Array | string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, body);
  renameSync(temporary, path);
}

function hashedCopy(source: string, assetsDir: string): string {
  const body = readFileSync(source);
  const dot = basename(source).lastIndexOf('.');
  const name = `${basename(source).slice(0, dot)}-${createHash('sha256').update(body).digest('hex').slice(0, 12)}${basename(source).slice(dot)}`;
  writeAtomically(join(assetsDir, name), body);
  return name;
}

/**
 * Bundles the console of `sourceDir` into `outDir`. Names carry a hash of their content, so concurrent
 * builds of the same sources write the same files, and every file (manifest.json last) is replaced in
 * one rename: a server reading them never sees half a build.
 */
export async function buildConsole(outDir = CONSOLE_OUT, sourceDir = CONSOLE_SOURCE): Promise<BuiltConsole> {
  const assetsDir = join(outDir, 'assets');
  mkdirSync(assetsDir, { recursive: true });
  const result = await build({
    entryPoints: [join(sourceDir, 'main.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: TARGETS,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    outdir: assetsDir,
    write: false,
    legalComments: 'none',
    charset: 'utf8',
    logLevel: 'silent',
  });
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
  const outputs = result.outputFiles.map((file) => basename(file.path));
  const script = outputs.find((n) => n.endsWith('.js'));
  const style = outputs.find((n) => n.endsWith('.css'));
  if (script === undefined || style === undefined) throw new Error(`the console build made no script or no style: ${outputs.join(', ')}`);
  const icon = hashedCopy(join(sourceDir, 'icon.svg'), assetsDir);
  const files = [script, style, icon];
  writeAtomically(join(outDir, 'manifest.json'), `${JSON.stringify({ script, style, icon, files }, null, 2)}\n`);
  // Files of earlier builds, none of them named by the manifest any more (another build's temporary files are left to it).
  for (const name of readdirSync(assetsDir)) if (!files.includes(name) && !name.endsWith('.tmp')) rmSync(join(assetsDir, name), { force: true });
  return { dir: outDir, script, style, icon, files };
}

if (import.meta.main) {
  const built = await buildConsole(process.argv[2] ?? CONSOLE_OUT);
  console.log(`console built into ${built.dir}: ${built.files.join(', ')}`);
}
