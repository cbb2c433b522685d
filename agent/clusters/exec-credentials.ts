/**
 * Exec credential plugins (a kubeconfig user with `exec`), as client-go runs them: the command with
 * its `args` and `env` added to the agent's environment, `KUBERNETES_EXEC_INFO` describing the call,
 * and an `ExecCredential` read from its output (a token, or a client certificate and key, with an
 * optional `expirationTimestamp`). The credential is kept until shortly before it expires
 * (`refreshAt`), and obtained again at once after the API server refuses it.
 *
 * client-node runs plugins itself, but only once the credential has expired, so a request can leave
 * with a credential that lapses on the way; and it runs one process per waiting request. The agent
 * therefore takes exec users out of client-node's hands (`takeExecUser`).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import * as v from 'valibot';
import type { Clock } from '../../shared/clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { CachedCredentials, runCredentialCommand, type Credentials } from './credentials.ts';

const execConfigSchema = v.object({
  command: v.pipe(v.string(), v.nonEmpty('is empty')),
  args: v.nullish(v.array(v.string()), []),
  env: v.nullish(v.array(v.object({ name: v.string(), value: v.string() })), []),
  apiVersion: v.nullish(v.string(), 'client.authentication.k8s.io/v1'),
});

export type ExecConfig = v.InferOutput<typeof execConfigSchema>;

const execCredentialSchema = v.object({
  kind: v.literal('ExecCredential'),
  status: v.object({
    token: v.optional(v.string()),
    clientCertificateData: v.optional(v.string()),
    clientKeyData: v.optional(v.string()),
    expirationTimestamp: v.optional(v.pipe(v.string(), v.isoTimestamp('is not an RFC 3339 time'))),
  }),
});

/** Where each issue is and what was expected; never what was found, which may be a credential. */
function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues.map((i) => `${v.getDotPath(i) ?? '(top)'}: expected ${i.expected ?? 'another value'}`).join('; ');
}

/** The exec configuration of the kubeconfig's current user, removed from it so client-node leaves it alone. */
export function takeExecUser(kc: KubeConfig, what: string): ExecConfig | undefined {
  const user = kc.getCurrentUser();
  if (user === null || user.exec === undefined || user.exec === null) return undefined;
  const parsed = v.safeParse(execConfigSchema, user.exec);
  if (!parsed.success) {
    throw new VendorError('invalid_input', `${what}: the exec section of user ${user.name} is not valid: ${describeIssues(parsed.issues)}`);
  }
  kc.users = kc.users.map((u) => (u.name === user.name ? { ...u, exec: undefined } : u));
  return parsed.output;
}

export function execCredentials(config: ExecConfig, deps: { clock: Clock; env?: NodeJS.ProcessEnv }): Credentials {
  const baseEnv = deps.env ?? process.env;
  return new CachedCredentials(async () => {
    const env: NodeJS.ProcessEnv = {
      ...baseEnv,
      ...Object.fromEntries(config.env.map((e) => [e.name, e.value])),
      KUBERNETES_EXEC_INFO: JSON.stringify({ apiVersion: config.apiVersion, kind: 'ExecCredential', spec: { interactive: false } }),
    };
    const { stdout } = await runCredentialCommand('exec credential plugin', config.command, config.args, env);
    let json: unknown;
    try {
      json = JSON.parse(stdout);
    } catch {
      throw new VendorError('unauthenticated', `exec credential plugin ${config.command} printed no ExecCredential JSON`);
    }
    const parsed = v.safeParse(execCredentialSchema, json);
    if (!parsed.success) {
      throw new VendorError('unauthenticated', `exec credential plugin ${config.command} printed an invalid ExecCredential: ${describeIssues(parsed.issues)}`);
    }
    const s = parsed.output.status;
    if (s.token === undefined && (s.clientCertificateData === undefined || s.clientKeyData === undefined)) {
      throw new VendorError('unauthenticated', `exec credential plugin ${config.command} gave neither a token nor a client certificate and key`);
    }
    return {
      ...(s.token === undefined ? {} : { token: s.token }),
      ...(s.clientCertificateData === undefined ? {} : { cert: s.clientCertificateData }),
      ...(s.clientKeyData === undefined ? {} : { key: s.clientKeyData }),
      ...(s.expirationTimestamp === undefined ? {} : { expiresAt: Date.parse(s.expirationTimestamp) }),
    };
  }, deps.clock);
}
