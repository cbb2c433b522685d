/**
 * Gives each test file the process environment the worker had before it: files of the
 * `shared-process` project share a worker (docs/testing.md#how-the-files-run), and a file that sets a
 * variable and does not put it back would change the files after it, and every process they start
 * (the deployed function's SST links, left behind, gave every driver process started later in the
 * worker the same metrics port, and all but the first failed to start).
 */
import { afterAll } from 'vitest';

/** Puts `env` back to `before`: what was added is removed, what was changed or removed is restored. */
export function restoreEnvironment(env: NodeJS.ProcessEnv, before: Readonly<Record<string, string | undefined>>): void {
  for (const key of Object.keys(env)) if (!(key in before)) delete env[key];
  for (const [key, value] of Object.entries(before)) if (value !== undefined) env[key] = value;
}

const before = { ...process.env };
afterAll(() => restoreEnvironment(process.env, before));
