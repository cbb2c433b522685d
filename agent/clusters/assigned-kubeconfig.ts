/**
 * What a kubeconfig of a driver-assigned account may read and run (`kubernetes.assignedAccounts` of
 * vendor-agent.yml, docs/agent-config.md#driver-assigned-accounts). Such a kubeconfig reference comes
 * from whoever may register accounts through the API, not from the agent's operator, so nothing is
 * read or run for it unless the agent's own file allows it:
 *
 * - the kubeconfig file, and every file it names (`token-file`, `client-certificate`, `client-key`,
 *   `certificate-authority`, an auth provider's `tokenFile` or `idp-certificate-authority`), must lie in
 *   one of `kubeconfigDirs` once `..` and symbolic links are resolved;
 * - a secret reference must match one of `secretReferences` (engine and path pattern);
 * - an exec plugin's `command`, and the gcp auth provider's `cmd-path`, must be one of
 *   `execCommands`; what runs is the listed executable itself. Other auth providers' `cmd-path` runs
 *   through a shell in client-node, so it is refused. Exec `env` may not set variables that change
 *   how a program finds or loads code.
 *
 * Messages name paths, keys and commands, never a file's contents.
 */
import { constants } from 'node:fs';
import { access, open, realpath } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve, sep } from 'node:path';
import { VendorError } from '../../shared/errors.ts';
import type { SecretEngineName } from '../../shared/secrets/engines.ts';
import type { SecretReference } from '../../shared/secrets/reference.ts';

export interface KubeconfigPolicy {
  /** Absolute folders. */
  readonly kubeconfigDirs: readonly string[];
  readonly secretReferences: readonly { readonly engine: SecretEngineName; readonly path: string }[];
  /** Absolute paths, or names looked up in PATH. */
  readonly execCommands: readonly string[];
}

/** Largest kubeconfig read for an assigned account. */
const MAX_KUBECONFIG_BYTES = 1024 * 1024;

const KEY = 'kubernetes.assignedAccounts';

function refused(message: string): VendorError {
  return new VendorError('forbidden', message);
}

/** Where a reference's secret lives, as `secretReferences[].path` patterns match it. */
export function secretLocation(reference: SecretReference): string {
  const p = reference.params;
  const trim = (s: string | undefined) => (s ?? '').replace(/^\/+|\/+$/g, '');
  if (reference.engine === 'vault') return `${trim(p['e'])}/${trim(p['p'])}`;
  if (reference.engine === 's3') return `${p['r'] ?? ''}/${p['b'] ?? ''}/${p['f'] ?? ''}`;
  return `${p['r'] ?? ''}/${p['s'] ?? ''}`;
}

function globMatches(pattern: string, text: string): boolean {
  const source = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${source}$`, 's').test(text);
}

export function assertReferenceAllowed(reference: SecretReference, policy: KubeconfigPolicy): void {
  const location = secretLocation(reference);
  if (!policy.secretReferences.some((r) => r.engine === reference.engine && globMatches(r.path, location))) {
    throw refused(`secret ${reference.engine} ${location} is not in ${KEY}.secretReferences`);
  }
}

async function realOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/** The real path of `path` (relative to `base`), when it lies in an allowed folder. */
export async function allowedPath(path: string, base: string, policy: KubeconfigPolicy, what: string): Promise<string> {
  // Named as given in messages (path.resolve would take a `..` away); realpath resolves it below.
  const absolute = isAbsolute(path) ? path : `${base.replace(/\/+$/, '')}/${path}`;
  let real: string;
  try {
    real = await realpath(absolute);
  } catch (e) {
    throw refused(`${what} ${absolute} cannot be resolved: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  for (const dir of policy.kubeconfigDirs) {
    const allowed = await realOrUndefined(dir);
    if (allowed !== undefined && inside(real, allowed)) return real;
  }
  throw refused(`${what} ${absolute} is not in ${KEY}.kubeconfigDirs${real === absolute ? '' : ` (it resolves to ${real})`}`);
}

/**
 * Reads the kubeconfig at `path` when it is a regular file in an allowed folder. It is opened by its
 * real path without following a link, so a link swapped in after the check is not followed.
 */
export async function readAllowedKubeconfig(path: string, policy: KubeconfigPolicy): Promise<{ text: string; realPath: string }> {
  const real = await allowedPath(path, process.cwd(), policy, 'kubeconfig');
  let handle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    throw refused(`kubeconfig ${real} cannot be opened: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw refused(`kubeconfig ${real} is not a regular file`);
    if (stat.size > MAX_KUBECONFIG_BYTES) throw refused(`kubeconfig ${real} is larger than ${MAX_KUBECONFIG_BYTES} bytes`);
    return { text: await handle.readFile('utf8'), realPath: real };
  } finally {
    await handle.close();
  }
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The absolute path `command` names: as given, relative to `base` when it holds a `/`, else found in PATH. */
async function locate(command: string, base: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (command.includes('/')) return isAbsolute(command) ? command : resolve(base, command);
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, command);
    if (await executable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The executable to run for `command`: the listed entry whose real path is the command's. The listed
 * path itself runs, so a multi-call binary behaves as the name the operator listed.
 */
export async function allowedCommand(command: string, base: string, policy: KubeconfigPolicy, env: NodeJS.ProcessEnv, what: string): Promise<string> {
  const found = await locate(command, base, env);
  const real = found === undefined ? undefined : await realOrUndefined(found);
  if (real !== undefined) {
    for (const entry of policy.execCommands) {
      const listed = await locate(entry, '/', env);
      if (listed !== undefined && (await realOrUndefined(listed)) === real && (await executable(listed))) return listed;
    }
  }
  throw refused(`${what} ${command} is not in ${KEY}.execCommands${found === undefined ? ' (not found)' : ''}`);
}

// Variables that make a program load or run other code than its own.
const CODE_LOADING_ENV = /^(?:LD_.*|DYLD_.*|PATH|NODE_OPTIONS|NODE_PATH|BASH_ENV|ENV|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|GCONV_PATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS)$/;

type Mapping = Record<string, unknown>;
const isMapping = (x: unknown): x is Mapping => typeof x === 'object' && x !== null && !Array.isArray(x);
const entries = (doc: Mapping, key: string, inner: string): [string, Mapping][] =>
  (Array.isArray(doc[key]) ? (doc[key] as unknown[]) : []).flatMap((e, i) => {
    if (!isMapping(e) || !isMapping(e[inner])) return [];
    return [[typeof e['name'] === 'string' ? e['name'] : `#${i}`, e[inner] as Mapping]];
  });

/** The commands a checked kubeconfig may run, each mapped to the executable that runs for it. */
export type AllowedCommands = ReadonlyMap<string, string>;

/**
 * Checks every file and command the parsed kubeconfig `doc` names, before client-node sees it (it
 * reads `token-file` as it loads the document). Relative paths are taken from `dir`, the kubeconfig's folder.
 */
export async function checkKubeconfigDocument(doc: unknown, dir: string, policy: KubeconfigPolicy, env: NodeJS.ProcessEnv): Promise<AllowedCommands> {
  const commands = new Map<string, string>();
  if (!isMapping(doc)) return commands;
  // client-node reads token files as it finds them, relative to the agent's working folder, and
  // the other files relative to the kubeconfig's; absolute paths leave no doubt which file is meant.
  const file = async (value: unknown, what: string, absoluteOnly = false) => {
    if (typeof value !== 'string' || value === '') return;
    if (absoluteOnly && !isAbsolute(value)) throw refused(`${what} must be an absolute path for an assigned account`);
    await allowedPath(value, dir, policy, what);
  };
  for (const [name, cluster] of entries(doc, 'clusters', 'cluster')) {
    await file(cluster['certificate-authority'], `certificate-authority of cluster ${name}`);
  }
  for (const [name, user] of entries(doc, 'users', 'user')) {
    await file(user['token-file'], `token-file of user ${name}`, true);
    for (const key of ['client-certificate', 'client-key']) await file(user[key], `${key} of user ${name}`);
    const exec = user['exec'];
    if (isMapping(exec) && typeof exec['command'] === 'string') {
      commands.set(exec['command'], await allowedCommand(exec['command'], dir, policy, env, `exec command of user ${name}`));
      const vars = Array.isArray(exec['env']) ? exec['env'] : [];
      for (const variable of vars) {
        const varName = isMapping(variable) ? variable['name'] : undefined;
        if (typeof varName === 'string' && CODE_LOADING_ENV.test(varName)) {
          throw refused(`the exec env of user ${name} sets ${varName}, which an assigned account may not set`);
        }
      }
    }
    const provider = user['auth-provider'];
    if (isMapping(provider)) {
      const config = isMapping(provider['config']) ? provider['config'] : {};
      for (const key of ['tokenFile', 'token-file', 'idp-certificate-authority']) await file(config[key], `auth-provider ${key} of user ${name}`, true);
      const cmd = config['cmd-path'];
      if (typeof cmd === 'string' && cmd !== '') {
        if (provider['name'] !== 'gcp') throw refused(`the auth-provider of user ${name} runs a command, which only the gcp provider may for an assigned account`);
        commands.set(cmd, await allowedCommand(cmd, dir, policy, env, `auth-provider cmd-path of user ${name}`));
      }
    }
  }
  return commands;
}
