/**
 * The data folder of `npm start` (`VENDOR_DATA_DIR`) holds the agent token, the agent's config and
 * every item of the table: this user's alone. The folder is made mode 0700, and what `npm start` keeps
 * in it 0700 (folders) or 0600 (files), which also mends a folder an earlier version left readable by
 * others. Anything else in the folder is left as it is: it may be a folder of the user's own.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const DATA_FOLDER_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/** What `npm start` keeps in the data folder. */
export const DATA_ENTRIES = ['agent-token', 'vendor-agent.yml', 'table'] as const;

/** Creates the folder (0700) or narrows an existing one and what it keeps there; symbolic links are left alone, never followed. */
export function privateDataFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: DATA_FOLDER_MODE });
  chmodSync(dir, DATA_FOLDER_MODE);
  const pending = DATA_ENTRIES.map((entry) => join(dir, entry));
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    let stat;
    try {
      stat = lstatSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // not made yet
      throw err;
    }
    if (stat.isDirectory()) {
      chmodSync(path, DATA_FOLDER_MODE);
      for (const entry of readdirSync(path)) pending.push(join(path, entry));
    } else if (stat.isFile() && (stat.mode & 0o777) !== DATA_FILE_MODE) chmodSync(path, DATA_FILE_MODE);
  }
}
