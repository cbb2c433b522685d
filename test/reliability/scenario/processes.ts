/**
 * Processes of the scenario (driver replicas, agents): started as their containers start them, their
 * output read line by line as it comes, killed without a word (SIGKILL) and started again. Every
 * line of every process goes to one listener, so a scenario can scan all of them for secrets and
 * count errors while it runs, without keeping a long run's output in memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const TETHER = new URL('./tether.ts', import.meta.url).href;

export interface OutputLine {
  /** `driver-1#2`: the process name and its incarnation. */
  source: string;
  stream: 'stdout' | 'stderr';
  text: string;
  /** The line as a JSON log record, when it is one. */
  record: Record<string, unknown> | undefined;
}

export interface ManagedProcessOptions {
  name: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  onLine(line: OutputLine): void;
}

/** The lines kept per incarnation for a failure report. */
const TAIL = 200;

export class ManagedProcess {
  readonly name: string;
  readonly #options: ManagedProcessOptions;
  #child: ChildProcess | undefined;
  #exited: Promise<number | null> = Promise.resolve(null);
  #incarnation = 0;
  #tail: string[] = [];
  /** Times this process was killed by the scenario. */
  kills = 0;
  /** Times it exited on its own (a crash, unless it was asked to stop). */
  unexpectedExits = 0;
  /** What each exit on its own looked like: its incarnation, exit code or signal, and its last lines. */
  readonly crashes: { incarnation: number; code: number | null; signal: NodeJS.Signals | null; stderr: string[]; lines: string[] }[] = [];
  #expectingExit = false;

  constructor(options: ManagedProcessOptions) {
    this.name = options.name;
    this.#options = options;
  }

  /** Started, and neither exited nor asked to stop. */
  get running(): boolean {
    return this.#child !== undefined && !this.#expectingExit && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get incarnation(): number {
    return this.#incarnation;
  }

  /** Settles when the current (or last) incarnation has exited. */
  get exited(): Promise<number | null> {
    return this.#exited;
  }

  /** The last lines of the current (or last) incarnation. */
  get tail(): readonly string[] {
    return this.#tail;
  }

  /** Starts a new incarnation; false when one is running already. */
  start(): boolean {
    if (this.running) return false;
    this.#incarnation++;
    const incarnation = this.#incarnation;
    this.#tail = [];
    const stderrTail: string[] = [];
    this.#expectingExit = false;
    const source = `${this.name}#${this.#incarnation}`;
    // stdin stays open for the process's life: when this process dies, it closes, and the tether ends the child.
    const child = spawn(process.execPath, ['--import', TETHER, ...this.#options.args], { cwd: this.#options.cwd, env: this.#options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#child = child;
    for (const stream of ['stdout', 'stderr'] as const) {
      const lines = createInterface({ input: child[stream] as NodeJS.ReadableStream });
      lines.on('line', (text) => {
        this.#tail.push(text);
        if (this.#tail.length > TAIL) this.#tail.shift();
        if (stream === 'stderr') {
          stderrTail.push(text);
          if (stderrTail.length > TAIL) stderrTail.shift();
        }
        let record: Record<string, unknown> | undefined;
        if (text.startsWith('{')) {
          try {
            record = JSON.parse(text) as Record<string, unknown>;
          } catch {
            record = undefined;
          }
        }
        this.#options.onLine({ source, stream, text, record });
      });
    }
    this.#exited = new Promise((resolve) =>
      child.on('close', (code, signal) => {
        if (!this.#expectingExit) {
          this.unexpectedExits++;
          this.crashes.push({ incarnation, code, signal, stderr: stderrTail.slice(-30), lines: this.#tail.slice(-10) });
        }
        resolve(code);
      }),
    );
    return true;
  }

  /** SIGKILL, as a node dies: no shutdown, nothing flushed. */
  async kill(): Promise<void> {
    if (!this.running) return this.#exited.then(() => undefined);
    this.kills++;
    this.#expectingExit = true;
    this.#child?.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return this.#exited.then(() => undefined);
    this.#expectingExit = true;
    this.#child?.kill('SIGTERM');
    const timer = setTimeout(() => this.#child?.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }
}
