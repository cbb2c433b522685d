import { KubeConfig } from '@kubernetes/client-node';

/** How a request authenticates: a bearer token, a client certificate, or nothing at all. */
export type Credentials =
  | { kind: 'token'; token: string }
  | { kind: 'clientCert'; cert: string; key: string }
  | { kind: 'anonymous' };

/**
 * An API server the cluster scenarios run against: the real kube-apiserver or the project's test API
 * server. Everything is reached over HTTPS on loopback.
 */
export interface ClusterTarget {
  /** Shown in test names, e.g. `kube-apiserver 1.20.2`. */
  readonly name: string;
  /** `https://127.0.0.1:<port>` */
  readonly url: string;
  readonly tls: { caCert: string };
  readonly auth: {
    /** Token of a user in `system:masters`. */
    admin: Credentials & { kind: 'token' };
    /** Client certificate of a user in `system:masters`, signed by a CA the server trusts. */
    adminCert: Credentials & { kind: 'clientCert' };
    /** Token of an authenticated user, named `user`, that no role grants anything. */
    unprivileged: Credentials & { kind: 'token'; user: string };
  };
  readonly knobs: {
    /**
     * Afterwards, every resourceVersion handed out so far is too old: watches from them, lists at
     * them and continue tokens made at them answer 410 Gone. Newer versions work as usual.
     */
    expireHistory(): Promise<void>;
  };
}

/** A running target and how to stop it. */
export interface StartedTarget {
  target: ClusterTarget;
  close(): Promise<void>;
}

/** One server the scenarios run against; the runner starts it once per test file. */
export interface TargetProvider {
  readonly name: string;
  /** Whether this machine can run it, decided without starting anything (test collection is synchronous). */
  availability(): { available: true } | { available: false; reason: string };
  start(): Promise<StartedTarget>;
}

/** A client-node KubeConfig for the target, authenticated with the given credentials. */
export function kubeConfigFor(target: ClusterTarget, credentials: Credentials): KubeConfig {
  const kc = new KubeConfig();
  const user =
    credentials.kind === 'token'
      ? { name: 'user', token: credentials.token }
      : credentials.kind === 'clientCert'
        ? { name: 'user', certData: b64(credentials.cert), keyData: b64(credentials.key) }
        : { name: 'user' };
  kc.loadFromOptions({
    clusters: [{ name: 'target', server: target.url, caData: b64(target.tls.caCert), skipTLSVerify: false }],
    users: [user],
    contexts: [{ name: 'target', cluster: 'target', user: 'user' }],
    currentContext: 'target',
  });
  return kc;
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
