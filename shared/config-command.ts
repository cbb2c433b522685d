import { parseArgs } from 'node:util';

/** What the command line of a program that reads a configuration file (the agent, the driver) asks for. */
export type ConfigCommand =
  | { name: 'run' | 'validate'; file: string | undefined }
  | { name: 'help' }
  | { name: 'version' }
  | { name: 'usage'; message: string };

/** `[run] [--config FILE]`, `validate [FILE | --config FILE]`, `version` (`--version`, `-V`), `--help`. */
export function parseConfigCommand(argv: readonly string[]): ConfigCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
    });
  } catch (e) {
    return { name: 'usage', message: e instanceof Error ? e.message : String(e) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { name: 'help' };
  if (values.version) return { name: 'version' };
  const [verb = 'run', ...rest] = positionals;
  if (verb === 'version') return rest.length === 0 ? { name: 'version' } : { name: 'usage', message: 'version takes no argument' };
  if (verb === 'validate') {
    if (rest.length > 1 || (rest.length === 1 && values.config !== undefined)) return { name: 'usage', message: 'validate takes one file' };
    return { name: 'validate', file: rest[0] ?? values.config };
  }
  if (verb === 'run' && rest.length === 0) return { name: 'run', file: values.config };
  return { name: 'usage', message: `unexpected argument: ${positionals.join(' ')}` };
}
