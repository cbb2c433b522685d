import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What `scripts/build-console.ts` writes beside the assets: the hashed names of the entry files. */
export interface ConsoleManifest {
  script: string;
  style: string;
  icon: string;
}

export interface ConsoleAsset {
  body: Uint8Array;
  contentType: string;
}

export interface ConsoleAssets {
  manifest: ConsoleManifest;
  /** By file name under `/ui/assets/`. */
  files: ReadonlyMap<string, ConsoleAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

export const MANIFEST_FILE = 'manifest.json';

/**
 * Where the built console is read from: `dist/` beside this module when run from the repository
 * (`npm start`, tests), `console/` in the Lambda's task root, where the deployment copies it
 * (docs/deploy.md#the-web-console).
 */
export function defaultConsoleDir(env: NodeJS.ProcessEnv = process.env): string {
  const taskRoot = env.LAMBDA_TASK_ROOT;
  return taskRoot !== undefined && taskRoot !== '' ? join(taskRoot, 'console') : join(import.meta.dirname, 'dist');
}

/** Reads the built console from `dir` (manifest and every asset it names); undefined when it is not built. */
export function readConsoleAssets(dir: string): ConsoleAssets | undefined {
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) return undefined;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ConsoleManifest & { files: string[] };
  const files = new Map<string, ConsoleAsset>();
  for (const name of manifest.files) {
    const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type !== undefined) files.set(name, { body: readFileSync(join(dir, 'assets', name)), contentType: type });
  }
  return { manifest: { script: manifest.script, style: manifest.style, icon: manifest.icon }, files };
}

/** The console read once from `dir` and kept; read again while it is missing, so a build after start is picked up. */
export function consoleAssetCache(dir: string): () => ConsoleAssets | undefined {
  let assets: ConsoleAssets | undefined;
  return () => (assets ??= readConsoleAssets(dir));
}
