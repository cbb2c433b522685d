/**
 * The command line of `vendorctl`, read with Node's `util.parseArgs` (docs/cli.md#why-no-framework):
 * every flag of every command is known to one parse, and each command then accepts only its own.
 * Flag values are checked here, with valibot, before anything is sent.
 */
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { usageError } from './errors.ts';
import { OUTPUT_FORMATS, type OutputFormat } from './output.ts';

export const OPTIONS = {
  output: { type: 'string', short: 'o' },
  server: { type: 'string' },
  'token-file': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
  file: { type: 'string', short: 'f' },
  namespace: { type: 'string', short: 'n' },
  name: { type: 'string' },
  'idempotency-key': { type: 'string' },
  wait: { type: 'string' },
  timeout: { type: 'string' },
  'force-conflicts': { type: 'boolean' },
  'api-version': { type: 'string' },
  replicas: { type: 'string' },
  'propagation-policy': { type: 'string' },
  'to-revision': { type: 'string' },
  state: { type: 'string' },
  zone: { type: 'string' },
  source: { type: 'string' },
  prefix: { type: 'string' },
} as const;

export type OptionName = keyof typeof OPTIONS;
export type Flags = { [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** Flags every command takes. */
export const GLOBAL_OPTIONS: readonly OptionName[] = ['output', 'server', 'token-file', 'help', 'version'];

export interface ParsedLine {
  positionals: string[];
  flags: Flags;
}

/**
 * `--wait` alone waits until the operation finishes; `--wait=SECONDS` at most that long. parseArgs
 * has no optional values, so the bare flag is given the empty value that means "no limit".
 */
function expandBareWait(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    if (arg === '--') {
      out.push(...argv.slice(out.length));
      break;
    }
    out.push(arg === '--wait' ? '--wait=' : arg);
  }
  return out;
}

export function parseLine(argv: readonly string[]): ParsedLine {
  // Refused by name and never echoed: a token given as a flag would stay in the shell's history.
  if (argv.some((a) => a === '--token' || a.startsWith('--token='))) {
    throw usageError('there is no --token flag: give the token in VENDOR_API_TOKEN or a file named by --token-file');
  }
  try {
    const { values, positionals } = parseArgs({ args: expandBareWait(argv), options: OPTIONS, allowPositionals: true, strict: true });
    return { positionals, flags: values as Flags };
  } catch (e) {
    throw usageError((e as Error).message);
  }
}

/** Refuses a flag the command does not take, naming it. */
export function checkAllowed(flags: Flags, allowed: readonly OptionName[], command: string): void {
  for (const [name, value] of Object.entries(flags)) {
    if (value === undefined) continue;
    if (!GLOBAL_OPTIONS.includes(name as OptionName) && !allowed.includes(name as OptionName)) {
      throw usageError(`${command} does not take --${name}`);
    }
  }
}

/** A flag's value checked by `schema`; a refusal names the flag. */
export function flagValue<TSchema extends v.GenericSchema<string, unknown>>(schema: TSchema, value: string, flag: string): v.InferOutput<TSchema> {
  const parsed = v.safeParse(schema, value);
  if (!parsed.success) throw usageError(`--${flag}: ${parsed.issues[0]?.message ?? 'not a valid value'}, got ${JSON.stringify(value)}`);
  return parsed.output;
}

/** An integer flag from `min` to `max`. */
export function integerFlag(value: string, flag: string, min: number, max: number): number {
  return flagValue(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `must be a whole number from ${min} to ${max}`),
      v.transform(Number),
      v.number(),
      v.minValue(min, `must be at least ${min}`),
      v.maxValue(max, `must be at most ${max}`),
    ),
    value,
    flag,
  );
}

export function outputFormat(flags: Flags): OutputFormat {
  if (flags.output === undefined) return 'table';
  return flagValue(v.picklist(OUTPUT_FORMATS, `must be one of ${OUTPUT_FORMATS.join(', ')}`), flags.output, 'output');
}

const serverSchema = v.pipe(
  v.string(),
  v.check((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'must be an http or https URL such as http://127.0.0.1:8080'),
);

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';

/** `--server`, else `VENDOR_API_URL`, else the local control plane of `npm start`. */
export function serverUrl(flags: Flags, env: NodeJS.ProcessEnv): string {
  if (flags.server !== undefined) return flagValue(serverSchema, flags.server, 'server');
  const fromEnv = env.VENDOR_API_URL;
  if (fromEnv !== undefined && fromEnv !== '') {
    const parsed = v.safeParse(serverSchema, fromEnv);
    if (!parsed.success) throw usageError(`VENDOR_API_URL: ${parsed.issues[0]?.message}`);
    return parsed.output;
  }
  return DEFAULT_SERVER;
}

/** The number of arguments a command takes, told as a usage error otherwise. */
export function checkArity(args: readonly string[], min: number, max: number, usage: string): void {
  if (args.length < min) throw usageError(`missing argument: ${usage}`);
  if (args.length > max) throw usageError(`unexpected argument ${JSON.stringify(args[max])}: ${usage}`);
}
