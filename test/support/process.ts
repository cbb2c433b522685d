import { spawn, type ChildProcess } from 'node:child_process';

/** A child process whose output lines are collected and can be waited for. */
export interface Child {
  readonly process: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Resolves with the first stdout line (past or future) that matches. */
  line(match: (line: string) => boolean): Promise<string>;
  exited: Promise<number | null>;
}

export function startChild(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Child {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: { match: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  const collect = (into: string[], notify: boolean) => {
    let rest = '';
    return (chunk: Buffer) => {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        into.push(line);
        if (!notify) continue;
        for (const w of waiters.filter((w) => w.match(line))) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    };
  };
  child.stdout!.on('data', collect(stdout, true));
  child.stderr!.on('data', collect(stderr, false));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    process: child,
    stdout,
    stderr,
    exited,
    line: (match) => {
      const seen = stdout.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}
