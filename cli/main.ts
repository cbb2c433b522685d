#!/usr/bin/env node
/**
 * `vendorctl`: the management API from a shell (docs/cli.md). Reads flags and files, checks them
 * before anything is sent, calls the API with the token from VENDOR_API_TOKEN or --token-file, and
 * prints the answer as a table, JSON or YAML.
 */
import { readFile } from 'node:fs/promises';
import { systemClock, type Clock } from '../shared/clock.ts';
import { VERSION } from '../shared/version.ts';
import { checkAllowed, checkArity, outputFormat, parseLine, serverUrl, type Flags } from './args.ts';
import { createClient } from './client.ts';
import { ACCOUNT_COMMANDS } from './commands/accounts.ts';
import { AGENT_IDENTITY_COMMANDS } from './commands/agent-identities.ts';
import { AGENT_COMMANDS } from './commands/agents.ts';
import { OPERATION_COMMANDS } from './commands/operations.ts';
import { RESOURCE_COMMANDS } from './commands/resources.ts';
import type { Command } from './context.ts';
import { describeError, EXIT, isUsageError, usageError } from './errors.ts';
import { commandUsage, overview } from './help.ts';

export const COMMANDS: readonly Command[] = [...ACCOUNT_COMMANDS, ...OPERATION_COMMANDS, ...RESOURCE_COMMANDS, ...AGENT_COMMANDS, ...AGENT_IDENTITY_COMMANDS];

export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  stdin: () => Promise<string>;
  fetch?: typeof fetch;
  clock?: Clock;
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

const processIo: CliIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  env: process.env,
  stdin: readStdin,
};

/** The command the words name: the longest match, since groups (`accounts`) hold several. */
function findCommand(positionals: readonly string[]): Command | undefined {
  return COMMANDS.find((c) => c.words.every((w, i) => positionals[i] === w));
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** The bearer token: the contents of --token-file (trimmed), else VENDOR_API_TOKEN. Never printed. */
async function bearerToken(flags: Flags, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const file = flags['token-file'];
  if (file !== undefined) {
    const token = (await readText(file, '--token-file')).trim();
    if (token === '') throw usageError(`--token-file ${file} is empty`);
    return token;
  }
  const fromEnv = env.VENDOR_API_TOKEN?.trim();
  return fromEnv === '' ? undefined : fromEnv;
}

export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  let command: Command | undefined;
  try {
    const { positionals, flags } = parseLine(argv);
    command = findCommand(positionals);
    if (flags.version) {
      io.out(`vendorctl ${VERSION}\n`);
      return EXIT.done;
    }
    if (command === undefined) {
      const group = COMMANDS.some((c) => c.words.length > 1 && c.words[0] === positionals[0]) ? positionals[0] : undefined;
      if (flags.help || positionals.length === 0) {
        (flags.help ? io.out : io.err)(overview(COMMANDS, group));
        return flags.help ? EXIT.done : EXIT.usage;
      }
      throw usageError(`unknown command: ${positionals.slice(0, group === undefined ? 1 : 2).join(' ')}`);
    }
    if (flags.help) {
      io.out(commandUsage(command));
      return EXIT.done;
    }
    const name = command.words.join(' ');
    checkAllowed(flags, command.options.map(([o]) => o), name);
    const args = positionals.slice(command.words.length);
    checkArity(args, command.arity[0], command.arity[1], ['vendorctl', name, command.args].join(' '));
    const format = outputFormat(flags);
    const api = createClient(serverUrl(flags, io.env), await bearerToken(flags, io.env), io.fetch);
    return await command.run({
      args,
      flags,
      api,
      format,
      clock: io.clock ?? systemClock,
      out: io.out,
      err: io.err,
      readInput: (path) => (path === '-' ? io.stdin() : readText(path, 'file')),
    });
  } catch (e) {
    io.err(describeError(e));
    if (!isUsageError(e)) return EXIT.api;
    io.err(`see: vendorctl ${command === undefined ? '' : `${command.words.join(' ')} `}--help\n`);
    return EXIT.usage;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
