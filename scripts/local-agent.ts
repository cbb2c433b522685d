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
import type { AccountSettings } from '../shared/accounts/schema.ts';
import type { FileIdentity } from '../driver/config.ts';
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
  readonly pid: number | undefined;
  readonly configPath: string;
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

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
}): LocalAgent {
  const configPath = join(options.dataDir, 'vendor-agent.yml');
  const config = {
    driver: { grpc: `127.0.0.1:${options.driverPort}`, insecure: true, auth: { token: options.token } },
    kubernetes: { reconnectTimeoutMs: 1000, assignedAccounts: localAllowlist(options.kubeconfig), accounts: [] },
    server: { host: '127.0.0.1', port: options.healthPort },
    logging: { format: options.logFormat },
  };
  writeFileSync(configPath, `# Written by npm start for its local agent; rewritten on every start.\n${stringify(config)}`, { mode: 0o600 });
  const child: ChildProcess = spawn(process.execPath, [AGENT_MAIN, '--config', configPath], {
    env: {
      ...options.env,
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
  let stopping = false;
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  void exited.then((code) => {
    if (!stopping) options.logger.error({ code }, 'the local agent exited');
  });
  return {
    pid: child.pid,
    configPath,
    exited,
    stop: async () => {
      if (child.exitCode !== null) return;
      stopping = true;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
