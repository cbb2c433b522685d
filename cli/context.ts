import type { Clock } from '../shared/clock.ts';
import type { Flags, OptionName } from './args.ts';
import type { ApiClient } from './client.ts';
import type { OutputFormat } from './output.ts';

/** What a command runs with: its arguments and flags, the API, the output format and the streams. */
export interface CommandContext {
  args: string[];
  flags: Flags;
  api: ApiClient;
  /** Measures how long `--wait` has waited. */
  clock: Clock;
  format: OutputFormat;
  out: (text: string) => void;
  err: (text: string) => void;
  /** A file's text; `-` reads standard input. */
  readInput: (path: string) => Promise<string>;
}

export interface Command {
  /** The words that name it: `['accounts', 'list']`. */
  words: readonly string[];
  /** Its arguments as the usage shows them: `<name>...`. */
  args: string;
  /** One line for the list of commands. */
  summary: string;
  /** Its own flags, each with a line of help; the global ones are always allowed. */
  options: readonly (readonly [OptionName, string])[];
  /** The number of arguments it takes. */
  arity: readonly [number, number];
  run(ctx: CommandContext): Promise<number>;
}
