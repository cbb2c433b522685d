/**
 * Builds the client-node `KubeConfig` for one account: the pod's service account with
 * `serviceAccount: true`, otherwise the account's kubeconfig file (a path, or a secret reference
 * resolved where it is used) at its `context`; then `insecure` and the proxy rules of docs/agent-config.md#proxies. Exec
 * plugins and the gcp auth provider are taken out of client-node's hands (see credentials.ts).
 * Failures name the account, the file reference and what is wrong, never the file's contents.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIPv6 } from 'node:net';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { parseDocument } from 'yaml';
import type { Clock } from '../../shared/clock.ts';
import { kubeconfigReferenceProblem } from '../../shared/accounts/kubeconfig-reference.ts';
import { VendorError } from '../../shared/errors.ts';
import { parseSecretReference } from '../../shared/secrets/reference.ts';
import { yamlValue } from '../../shared/yaml-value.ts';
import { applyClusterProxy, type ProxyDecision } from '../net/proxy.ts';
import type { SecretResolver } from '../secrets/index.ts';
import { assertReferenceAllowed, checkKubeconfigDocument, readAllowedKubeconfig, type AllowedCommands } from './assigned-kubeconfig.ts';
import type { Credentials } from './credentials.ts';
import { execCredentials, takeExecUser, type ExecConfig } from './exec-credentials.ts';
import { parsedKubeconfig, type ParsedKubeconfig } from './parsed-kubeconfigs.ts';
import { gcpCredentials, takeGcpUser, type GcpConfig } from './gcp-credentials.ts';
import type { ClusterSpec } from './types.ts';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface InClusterSource {
  env: Readonly<Record<string, string | undefined>>;
  /** Folder holding `token` and `ca.crt`; the standard one by default. */
  dir: string;
}

export interface ClusterConfigDeps {
  secrets: Pick<SecretResolver, 'resolveFile'>;
  /** `kubernetes.noProxy`. */
  kubernetesNoProxy: boolean;
  inCluster?: InClusterSource;
  /** Environment of credential plugins and Application Default Credentials; the agent's by default. */
  env?: NodeJS.ProcessEnv;
}

export interface LoadedCluster {
  kubeConfig: KubeConfig;
  server: string;
  /** See `ClusterClient.identity`. */
  identity?: string;
  proxy: ProxyDecision;
  /** For a user with an exec plugin or the gcp auth provider: the agent's own credentials for it. */
  credentials?: (clock: Clock) => Credentials;
}

function invalid(spec: ClusterSpec, message: string, cause?: unknown): VendorError {
  return new VendorError('invalid_input', `account ${spec.account}: ${message}`, cause === undefined ? {} : { cause });
}

async function fromServiceAccount(spec: ClusterSpec, source: InClusterSource): Promise<KubeConfig> {
  const host = source.env['KUBERNETES_SERVICE_HOST'];
  const port = source.env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    throw invalid(spec, 'serviceAccount is true but the agent does not run in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)');
  }
  const tokenFile = `${source.dir}/token`;
  const caFile = `${source.dir}/ca.crt`;
  for (const file of [tokenFile, caFile]) {
    try {
      await readFile(file);
    } catch (e) {
      throw invalid(spec, `serviceAccount is true but ${file} cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, e);
    }
  }
  const kc = new KubeConfig();
  // Bound service account tokens rotate; the tokenFile provider reads the file again every minute.
  kc.loadFromClusterAndUser(
    { name: 'in-cluster', server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`, caFile, skipTLSVerify: false },
    { name: 'service-account', authProvider: { name: 'tokenFile', config: { tokenFile } } },
  );
  return kc;
}

/** Names a kubeconfig reference in messages: itself, unless it is not one (it may be a file's contents). */
function labelOf(reference: string): string {
  return kubeconfigReferenceProblem(reference) === undefined ? reference : '(a value that is not a kubeconfig reference, not shown)';
}

interface FromFile {
  kc: KubeConfig;
  /** For an assigned account: the executables its commands may run as. */
  commands?: AllowedCommands;
}

/** The document as plain data, or undefined when it cannot be (too many aliases, say). */
function plainDocument(doc: ReturnType<typeof parseDocument>): { value: unknown } | undefined {
  const read = yamlValue(doc);
  return 'problem' in read ? undefined : read;
}

/** client-node's reading of the document, paths made absolute against `dir`; undefined when it is no kubeconfig. */
function loadOptions(text: string, dir: string): ParsedKubeconfig['options'] {
  const kc = new KubeConfig();
  try {
    kc.loadFromString(text);
    kc.makePathsAbsolute(dir);
  } catch {
    return undefined;
  }
  return { clusters: kc.clusters, contexts: kc.contexts, users: kc.users, currentContext: kc.currentContext };
}

async function fromFile(spec: ClusterSpec, reference: string, deps: ClusterConfigDeps): Promise<FromFile> {
  const policy = spec.policy;
  const label = labelOf(reference);
  let fileReference = false;
  if (policy !== undefined) {
    const problem = kubeconfigReferenceProblem(reference);
    if (problem !== undefined) throw invalid(spec, `the kubeconfig reference is refused: ${problem}`);
    const secret = parseSecretReference(reference);
    if (secret !== undefined) assertReferenceAllowed(secret, policy);
    // The agent's own private file, written from the allowed secret.
    fileReference = secret?.form === 'encryptedFile';
  }
  const path = await deps.secrets.resolveFile(reference);
  let text: string;
  let dir = dirname(path);
  if (policy !== undefined && !fileReference) {
    const read = await readAllowedKubeconfig(path, policy);
    text = read.text;
    dir = dirname(read.realPath);
  } else {
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      throw invalid(spec, `kubeconfig ${label} cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, e);
    }
  }
  const parsed = parsedKubeconfig(text, dir, () => {
    // Parse errors of YAML libraries quote the document; the kubeconfig holds credentials, so only
    // the position is reported.
    const doc = parseDocument(text);
    if (doc.errors.length > 0) {
      const line = doc.errors[0]?.linePos?.[0].line;
      throw invalid(spec, `kubeconfig ${label} is not valid YAML${line === undefined ? '' : ` (line ${line})`}`);
    }
    return { js: plainDocument(doc), options: loadOptions(text, dir) };
  });
  let commands: AllowedCommands | undefined;
  if (policy !== undefined) {
    if (parsed.js === undefined) throw invalid(spec, `kubeconfig ${label} is not a valid kubeconfig document`);
    commands = await checkKubeconfigDocument(parsed.js.value, dir, policy, deps.env ?? process.env);
  }
  if (parsed.options === undefined) throw invalid(spec, `kubeconfig ${label} is not a valid kubeconfig document`);
  const kc = new KubeConfig();
  kc.loadFromOptions(parsed.options);
  if (spec.context !== '') {
    if (kc.getContextObject(spec.context) === null) {
      const known = kc.getContexts().map((c) => c.name);
      throw invalid(spec, `context ${spec.context} is not in kubeconfig ${label} (it has: ${known.join(', ') || 'no contexts'})`);
    }
    kc.setCurrentContext(spec.context);
  } else if (kc.getCurrentContext() === '' || kc.getContextObject(kc.getCurrentContext()) === null) {
    throw invalid(spec, `kubeconfig ${label} has no current context and the account names none`);
  }
  if (kc.getCurrentCluster() === null) throw invalid(spec, `the context of kubeconfig ${label} names a cluster it does not define`);
  if (kc.getCurrentUser() === null) throw invalid(spec, `the context of kubeconfig ${label} names a user it does not define`);
  return commands === undefined ? { kc } : { kc, commands };
}

/** An assigned account's exec plugin runs the listed executable its command was checked against. */
function allowedExec(exec: ExecConfig | undefined, commands: AllowedCommands | undefined): ExecConfig | undefined {
  if (exec === undefined || commands === undefined) return exec;
  const listed = commands.get(exec.command);
  if (listed === undefined) throw new VendorError('forbidden', `exec command ${exec.command} was not checked`);
  return { ...exec, command: listed };
}

function allowedGcp(gcp: GcpConfig | undefined, commands: AllowedCommands | undefined): GcpConfig | undefined {
  const cmd = gcp?.['cmd-path'];
  if (gcp === undefined || commands === undefined || cmd === undefined || cmd === '') return gcp;
  const listed = commands.get(cmd);
  if (listed === undefined) throw new VendorError('forbidden', `gcp cmd-path ${cmd} was not checked`);
  return { ...gcp, 'cmd-path': listed };
}

/** A digest of the current cluster (server, TLS, proxy) and user: equal for the accounts that reach one API server as one user. */
function clientIdentity(kc: KubeConfig): string {
  return createHash('sha256').update(JSON.stringify([kc.getCurrentCluster(), kc.getCurrentUser()])).digest('hex');
}

/** The configuration to reach `spec`'s cluster, ready for requests. */
export async function loadClusterConfig(spec: ClusterSpec, deps: ClusterConfigDeps): Promise<LoadedCluster> {
  let kc: KubeConfig;
  let commands: AllowedCommands | undefined;
  if (spec.serviceAccount) {
    kc = await fromServiceAccount(spec, deps.inCluster ?? { env: process.env, dir: SERVICE_ACCOUNT_DIR });
  } else if (spec.kubeConfigFile !== undefined && spec.kubeConfigFile !== '') {
    ({ kc, commands } = await fromFile(spec, spec.kubeConfigFile, deps));
  } else {
    throw invalid(spec, 'neither serviceAccount nor a kubeconfig file is set');
  }
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw invalid(spec, 'no cluster to connect to');
  if (spec.insecure) {
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, skipTLSVerify: true } : c));
  }
  const proxy = applyClusterProxy(kc, { kubernetesNoProxy: deps.kubernetesNoProxy, accountNoProxy: spec.noProxy });
  const env = deps.env ?? process.env;
  // Before the exec user is taken out of the configuration: it is part of who the client is.
  const identity = clientIdentity(kc);
  const exec = allowedExec(takeExecUser(kc, `account ${spec.account}`), commands);
  const gcp = allowedGcp(takeGcpUser(kc), commands);
  const credentials =
    exec !== undefined
      ? (clock: Clock) => execCredentials(exec, { clock, env })
      : gcp !== undefined
        ? (clock: Clock) => gcpCredentials(gcp, spec.oAuthScopes, { clock, env })
        : undefined;
  return { kubeConfig: kc, server: cluster.server, identity, proxy, ...(credentials === undefined ? {} : { credentials }) };
}
