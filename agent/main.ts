import { startAgent } from './agent.ts';
import { loadConfigFile, resolveConfigPath } from './config/load.ts';
import { formatReport } from '../shared/config-report/report.ts';
import { parseConfigCommand } from '../shared/config-command.ts';
import { VERSION } from '../shared/version.ts';

const USAGE = `usage:
  vendor-agent [run] [--config FILE]   run the agent
  vendor-agent validate [FILE]         check a configuration file; exit 0 only when it is valid
  vendor-agent version                 print the version (also --version, -V)

FILE defaults to /opt/vendor/config/vendor-agent.yml, then ./vendor-agent.yml.
`;

/** How long SIGTERM waits for the components to stop before the process exits anyway. */
export const AGENT_SHUTDOWN_TIMEOUT_MS = 20_000;

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

const processIo: Io = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

/** `validate`: prints the report; 0 when the file is valid, 1 when it is not. */
export async function validate(file: string | undefined, io: Io = processIo): Promise<number> {
  const result = await loadConfigFile(resolveConfigPath(file));
  (result.config === undefined ? io.err : io.out)(formatReport(result));
  return result.config === undefined ? 1 : 0;
}

/** `run`: refuses to start (exit 1) on an invalid file, before connecting anywhere; runs until SIGTERM/SIGINT. */
async function run(file: string | undefined, io: Io): Promise<number> {
  // Until the reloader listens, a SIGHUP must not end the process (its default action).
  const ignoreHangup = () => {};
  process.on('SIGHUP', ignoreHangup);
  const path = resolveConfigPath(file);
  const result = await loadConfigFile(path);
  if (result.config === undefined) {
    io.err(formatReport(result));
    io.err('the agent did not start\n');
    return 1;
  }
  let agent;
  try {
    agent = await startAgent({ config: result.config, configPath: path, warnings: result.warnings });
  } catch (e) {
    io.err(`the agent could not start: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  const stopped = agent;
  return new Promise<number>((resolve) => {
    const shutdown = (signal: NodeJS.Signals) => {
      stopped.ctx.logger.info({ signal }, 'stopping');
      const timer = setTimeout(() => {
        stopped.ctx.logger.error({ timeoutMs: AGENT_SHUTDOWN_TIMEOUT_MS }, 'components did not stop in time; exiting');
        resolve(1);
      }, AGENT_SHUTDOWN_TIMEOUT_MS);
      timer.unref();
      void stopped.stop().then(() => {
        clearTimeout(timer);
        resolve(0);
      });
    };
    process.once('SIGTERM', shutdown);
    process.once('SIGINT', shutdown);
  });
}

export async function agentMain(argv: readonly string[], io: Io = processIo): Promise<number> {
  const command = parseConfigCommand(argv);
  switch (command.name) {
    case 'help':
      io.out(USAGE);
      return 0;
    case 'version':
      io.out(`vendor-agent ${VERSION}\n`);
      return 0;
    case 'usage':
      io.err(`${command.message}\n${USAGE}`);
      return 2;
    case 'validate':
      return validate(command.file, io);
    case 'run':
      return run(command.file, io);
  }
}

if (import.meta.main) {
  process.exitCode = await agentMain(process.argv.slice(2));
  // Handles (watchers, sockets) of a stopped agent must not keep the process alive.
  process.exit();
}
