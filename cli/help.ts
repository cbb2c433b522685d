/** The help `vendorctl` prints: the list of commands, and each command's usage and flags. */
import { OPTIONS, type OptionName } from './args.ts';
import type { Command } from './context.ts';

const GLOBAL_HELP = `Flags of every command:
  -o, --output table|json|yaml  how to print the result (default table; json and yaml print the API's answer)
  --server URL                  the management API (default VENDOR_API_URL, else http://127.0.0.1:8080)
  --token-file FILE             read the bearer token from FILE (default: VENDOR_API_TOKEN)
  -h, --help                    this help; -V, --version the version

Exit codes: 0 done, 1 an operation failed (or had not finished when --wait ran out), 2 usage error,
3 API error (or the API could not be reached). docs/cli.md has the details.
`;

/** What each flag's value is, as the help shows it. */
const VALUE_NAMES: Partial<Record<OptionName, string>> = {
  file: ' FILE',
  namespace: ' NAMESPACE',
  name: ' NAME',
  'idempotency-key': ' KEY',
  wait: '[=SECONDS]',
  timeout: ' SECONDS',
  'api-version': ' APIVERSION',
  replicas: ' N',
  'propagation-policy': ' POLICY',
  'to-revision': ' REVISION',
  state: ' STATE[,STATE]',
  zone: ' ZONE',
  source: ' SOURCE[,SOURCE]',
  prefix: ' PREFIX',
};

function flagName(name: OptionName): string {
  const option: { short?: string; type: string } = OPTIONS[name];
  const short = option.short === undefined ? '' : `-${option.short}, `;
  return `${short}--${name}${option.type === 'string' ? (VALUE_NAMES[name] ?? ' VALUE') : ''}`;
}

export function commandUsage(command: Command): string {
  const line = ['vendorctl', ...command.words, command.args].filter((s) => s !== '').join(' ');
  const flags = command.options.map(([name, help]) => `  ${flagName(name).padEnd(30)}${help}`);
  return [`usage: ${line}`, '', command.summary, ...(flags.length === 0 ? [] : ['', ...flags]), '', GLOBAL_HELP].join('\n');
}

/** The commands (of one group, when `group` is given), one line each. */
export function overview(commands: readonly Command[], group?: string): string {
  const shown = commands.filter((c) => group === undefined || c.words[0] === group);
  const lines = shown.flatMap((c) => [`  ${[...c.words, c.args].filter((s) => s !== '').join(' ')}`, `      ${c.summary}`]);
  return [
    'usage: vendorctl <command> [flags]   (vendorctl <command> --help for its flags)',
    '',
    'A command line for the vendor-agent management API.',
    '',
    'Commands:',
    ...lines,
    '',
    GLOBAL_HELP,
  ].join('\n');
}
