import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The private folder where `encryptedFile:` secrets become files: the folder is 0700, each file
 * 0600, both owned by the agent's user. A reference always maps to the same file name, so a
 * kubeconfig path stays stable while its content is refreshed; updates are written beside the file
 * and renamed over it, so a reader never sees half a secret.
 */
export class PrivateFiles {
  readonly #parent: string;
  #folder: Promise<string> | undefined;
  #writes = 0;

  constructor(parent: string) {
    this.#parent = parent;
  }

  /** Writes `content` for `key` unless the file already holds it, and returns the file's path. */
  async write(key: string, content: Buffer): Promise<string> {
    const folder = await this.#ensureFolder();
    const path = join(folder, createHash('sha256').update(key).digest('hex').slice(0, 24));
    const current = await readFile(path).catch(() => undefined);
    if (current !== undefined && current.equals(content)) return path;
    const staging = `${path}.${process.pid}.${++this.#writes}.tmp`;
    await writeFile(staging, content, { mode: 0o600, flag: 'wx' });
    await chmod(staging, 0o600);
    await rename(staging, path);
    return path;
  }

  /** Removes the folder and every file in it. */
  async remove(): Promise<void> {
    const folder = this.#folder;
    this.#folder = undefined;
    if (folder === undefined) return;
    const path = await folder.catch(() => undefined);
    if (path !== undefined) await rm(path, { recursive: true, force: true });
  }

  #ensureFolder(): Promise<string> {
    this.#folder ??= (async () => {
      const folder = await mkdtemp(join(this.#parent, 'vendor-secrets-'));
      await chmod(folder, 0o700);
      return folder;
    })().catch((e: unknown) => {
      this.#folder = undefined;
      throw e;
    });
    return this.#folder;
  }
}
