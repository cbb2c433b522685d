/**
 * The agent `npm start` runs beside the local control plane when a kubeconfig is given: a child
 * process (`node agent/main.ts --config <data>/vendor-agent.yml`) dialling the driver in plaintext on
 * loopback with the local token, in zone `vendor-agent_local`, with no static accounts (accounts
 * come from the driver: POST and PATCH them). Its `kubernetes.assignedAccounts` allows what the given
 * kubeconfig uses and nothing more. Its log lines are passed on prefixed with `[agent]`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import type { AccountSettings } from '../shared/accounts/settings.ts';
import type { FileIdentity } from '../driver/config.ts';
import { Backoff, type BackoffPolicy, type Random } from '../shared/backoff.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/log.ts';
import type { DefinitionSource } from '../shared/table/sources/definition-sources.ts';

const AGENT_MAIN = fileURLToPath(new URL('../agent/main.ts', import.meta.url));

export const LOCAL_AGENT_ID = 'local-agent';
export const LOCAL_ZONE = { deployment: 'vendor-agent', namespace: 'local' } as const;
/** The driver-defined account `npm start` adds for the given kubeconfig. */
export const LOCAL_ACCOUNT = 'local';
/** How long stopping waits for the agent to exit before killing it. */
const STOP_TIMEOUT_MS = 25_000;

/** `VENDOR_LOCAL_KUBECONFIG`, else the first path of `KUBECONFIG`; undefined when neither is set. */
export function localKubeconfig(env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  const raw = env.VENDOR_LOCAL_KUBECONFIG || env.KUBECONFIG?.split(':').find((p) => p !== '');
  return raw === undefined || raw === '' ? undefined : resolve(cwd, raw);
}

/**
 * The source of the `local` account: the given kubeconfig at its current context, or nothing (so a
 * start without a kubeconfig removes the account a previous start added).
 */
export function localAccountSource(kubeconfig: string | undefined): DefinitionSource {
  const accounts: AccountSettings[] = kubeconfig === undefined ? [] : [{ name: LOCAL_ACCOUNT, kubeconfigFile: kubeconfig }];
  return { id: 'local-kubeconfig', kind: 'driver-config', load: async () => accounts };
}

/** The bearer token of the local driver and agent: made once, kept (mode 0600) in the data folder. */
export function localToken(dataDir: string): string {
  const file = join(dataDir, 'agent-token');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept.length >= 16) return kept;
  }
  const token = randomBytes(24).toString('hex');
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/**
 * The identity of the local agent: its zone, accounts pinned to no zone, its agent id and no static
 * accounts (it defines none), with the local token as its one token.
 */
export function localIdentity(token: string): FileIdentity {
  return {
    name: 'npm-start-local-agent',
    zones: [`${LOCAL_ZONE.deployment}_${LOCAL_ZONE.namespace}`],
    unzoned: true,
    agentIds: [LOCAL_AGENT_ID],
    staticAccounts: [],
    tokens: [token],
  };
}

type Mapping = Record<string, unknown>;
const isMapping = (x: unknown): x is Mapping => typeof x === 'object' && x !== null && !Array.isArray(x);
const inner = (doc: Mapping, list: string, key: string): Mapping[] =>
  (Array.isArray(doc[list]) ? (doc[list] as unknown[]) : []).flatMap((e) => (isMapping(e) && isMapping(e[key]) ? [e[key] as Mapping] : []));

/**
 * `kubernetes.assignedAccounts` for the local agent: the kubeconfig's folder and the folders of the
 * files it names, and the commands its users run (docs/agent-config.md#driver-assigned-accounts).
 */
export function localAllowlist(kubeconfig: string): { kubeconfigDirs: string[]; execCommands: string[] } {
  const dir = dirname(kubeconfig);
  const dirs = new Set([dir]);
  const commands = new Set<string>();
  let doc: unknown;
  try {
    doc = parse(readFileSync(kubeconfig, 'utf8'));
  } catch {
    doc = undefined; // the agent reports an unreadable kubeconfig when the account is activated
  }
  const fileDir = (value: unknown) => {
    if (typeof value === 'string' && value !== '') dirs.add(dirname(resolve(dir, value)));
  };
  const command = (value: unknown) => {
    if (typeof value === 'string' && value !== '') commands.add(value.includes('/') && !isAbsolute(value) ? resolve(dir, value) : value);
  };
  if (isMapping(doc)) {
    for (const cluster of inner(doc, 'clusters', 'cluster')) fileDir(cluster['certificate-authority']);
    for (const user of inner(doc, 'users', 'user')) {
      for (const key of ['token-file', 'client-certificate', 'client-key']) fileDir(user[key]);
      if (isMapping(user['exec'])) command(user['exec']['command']);
      const provider = user['auth-provider'];
      const config = isMapping(provider) && isMapping(provider['config']) ? provider['config'] : {};
      for (const key of ['tokenFile', 'token-file', 'idp-certificate-authority']) fileDir(config[key]);
      if (isMapping(provider) && provider['name'] === 'gcp') command(config['cmd-path']);
    }
  }
  return { kubeconfigDirs: [...dirs], execCommands: [...commands] };
}

export interface LocalAgent {
  /** The process id of the agent running now (a restart gives a new one). */
  readonly pid: number | undefined;
  readonly configPath: string;
  /** How many times the agent was started again after it exited on its own. */
  readonly restarts: number;
  /** Resolves once stopped, with the exit code of the last agent process. */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Waits before starting the agent again after it exited on its own: a crash that repeats at once is
 * not retried in a tight loop, and a one-off crash is back within about a second.
 */
export const RESTART_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 30_000, jitter: [0.5, 1], round: true };
/** An agent that ran this long before exiting starts again after the shortest wait. */
const STABLE_RUN_MS = 60_000;

interface AgentProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

function spawnAgent(configPath: string, env: NodeJS.ProcessEnv): AgentProcess {
  const child: ChildProcess = spawn(process.execPath, [AGENT_MAIN, '--config', configPath], {
    env: {
      ...env,
      VENDOR_AGENT_ID: LOCAL_AGENT_ID,
      VENDOR_DEPLOYMENT_NAME: LOCAL_ZONE.deployment,
      POD_NAMESPACE: LOCAL_ZONE.namespace,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[agent] ${line}\n`));
  }
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  return { child, exited };
}

/**
 * Runs the local agent and keeps it running: when it exits without being asked to, it is started
 * again after a wait from `RESTART_BACKOFF` (docs/local.md#what-it-runs-and-the-settings), and each exit and restart
 * is logged, so an agent crash does not leave the `local` account FAILED until the next `npm start`.
 */
export function startLocalAgent(options: {
  dataDir: string;
  /** The kubeconfig of the `local` account, whose files and commands the agent may use. */
  kubeconfig: string;
  driverPort: number;
  token: string;
  healthPort: number;
  logFormat: 'text' | 'json';
  env: NodeJS.ProcessEnv;
  logger: Logger;
  clock?: Clock;
  random?: Random;
}): LocalAgent {
  const configPath = join(options.dataDir, 'vendor-agent.yml');
  const config = {
    driver: { grpc: `127.0.0.1:${options.driverPort}`, insecure: true, auth: { token: options.token } },
    kubernetes: { reconnectTimeoutMs: 1000, assignedAccounts: localAllowlist(options.kubeconfig), accounts: [] },
    server: { host: '127.0.0.1', port: options.healthPort },
    logging: { format: options.logFormat },
  };
  writeFileSync(configPath, `# Written by npm start for its local agent; rewritten on every start.\n${stringify(config)}`, { mode: 0o600 });
  const clock = options.clock ?? systemClock;
  const backoff = new Backoff(RESTART_BACKOFF, options.random);
  const stopped = new AbortController();
  let current = spawnAgent(configPath, options.env);
  let restarts = 0;

  const supervise = async (): Promise<number | null> => {
    for (;;) {
      const startedAt = clock.now();
      const code = await current.exited;
      if (stopped.signal.aborted) return code;
      if (clock.now() - startedAt >= STABLE_RUN_MS) backoff.succeeded();
      const waitMs = backoff.failed();
      options.logger.error({ code, restartInMs: waitMs }, 'the local agent exited; starting it again');
      try {
        await clock.sleep(waitMs, stopped.signal);
      } catch {
        return code;
      }
      current = spawnAgent(configPath, options.env);
      restarts++;
      options.logger.info({ pid: current.child.pid, restarts }, 'the local agent started again');
    }
  };
  const exited = supervise();

  return {
    get pid() {
      return current.child.pid;
    },
    get restarts() {
      return restarts;
    },
    configPath,
    exited,
    stop: async () => {
      stopped.abort();
      const { child } = current;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await current.exited;
        clearTimeout(timer);
      }
      await exited;
    },
  };
}
