import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { makeClusterPki } from '../support/pki.ts';
import { type ManagedProcess, freePort, startProcess, waitUntilReady } from './process.ts';

/**
 * A real kube-apiserver with its own etcd, both on loopback, for tests. Test code: it trusts its
 * inputs and favours clear failures (with the processes' last output) over recovery.
 */
export interface RealCluster {
  /** `https://127.0.0.1:<port>`; unchanged across `restartApiServer()`. */
  readonly url: string;
  readonly caCert: string;
  /** A token of `vendor-admin` in `system:masters`. */
  readonly adminToken: string;
  /** A token of `vendor-nobody`, authenticated but granted nothing by RBAC. */
  readonly unprivilegedToken: string;
  readonly unprivilegedUser: string;
  /** PEM client certificate and key of `vendor-admin` in `system:masters`. */
  readonly clientCert: string;
  readonly clientKey: string;
  /** `http://127.0.0.1:<port>` of etcd. */
  readonly etcdUrl: string;
  /** Writes a kubeconfig (CA and credentials inline) and returns its path. */
  writeKubeconfig(path: string, auth?: 'token' | 'clientCert'): Promise<string>;
  /** Compacts etcd's history past every revision so far; returns the compaction revision. */
  compactEtcd(): Promise<number>;
  /** Stops and starts kube-apiserver on the same port and etcd; its watch cache starts empty. */
  restartApiServer(): Promise<void>;
  /** Stops kube-apiserver (etcd stays): connections to its port are refused until `startApiServer()`. */
  stopApiServer(): Promise<void>;
  /** Starts a stopped kube-apiserver again and waits until it is ready. */
  startApiServer(): Promise<void>;
  /**
   * Whether the API server accepts `adminToken`, from its next start on (a static token file is read
   * at start); revoking it is how a credential is refused (401), and restoring it how it is taken again.
   */
  acceptAdminToken(accepted: boolean): Promise<void>;
  /** The API server's audit events so far (with `auditLog`; empty without). */
  auditEvents(): Promise<AuditEvent[]>;
  /** Stops both processes and removes their data. */
  close(): Promise<void>;
}

/**
 * What the tests read of an audit event (audit.k8s.io/v1, level Metadata): one per request at
 * `ResponseComplete`, and for a watch also one at `ResponseStarted` (it completes only when it ends).
 */
export interface AuditEvent {
  stage: 'ResponseStarted' | 'ResponseComplete' | 'Panic';
  verb: string;
  userAgent?: string;
  requestURI: string;
  user: { username: string };
  objectRef?: { resource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  /** RFC 3339 with microseconds. */
  requestReceivedTimestamp: string;
}

export interface RealClusterOptions {
  kubeApiserver: string;
  etcd: string;
  /** How long to wait for `/readyz`; about 7 s on 2 idle cores, several times that when they are busy. */
  readyTimeoutMs?: number;
  /** Record every request's metadata in an audit log, read back by `auditEvents()`. */
  auditLog?: boolean;
}

interface Layout {
  dir: string;
  etcdPort: number;
  apiPort: number;
  pki: Awaited<ReturnType<typeof makeClusterPki>>;
  tokenFile: string;
  auditPolicy: string;
  auditLog: string;
}

async function layout(): Promise<Layout> {
  // etcd fsyncs every write: a tmpfs keeps that off the shared disk when one exists.
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  const dir = await mkdtemp(join(base, 'vendor-kube-'));
  await mkdir(join(dir, 'pki'));
  const pki = await makeClusterPki(join(dir, 'pki'));
  return { dir, etcdPort: await freePort(), apiPort: await freePort(), pki, tokenFile: join(dir, 'tokens.csv'), auditPolicy: join(dir, 'audit-policy.yaml'), auditLog: join(dir, 'audit.log') };
}

function startEtcd(binary: string, l: Layout, peerPort: number): ManagedProcess {
  const client = `http://127.0.0.1:${l.etcdPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return startProcess('etcd', binary, [
    '--name=vendor-test',
    `--data-dir=${join(l.dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=vendor-test=${peer}`,
    '--log-level=warn',
  ], join(l.dir, 'etcd.log'));
}

// Every request without bodies, when its answer is complete, and a watch also when it starts.
const AUDIT_POLICY = 'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ["RequestReceived"]\nrules:\n  - level: Metadata\n';

function startApiServer(binary: string, l: Layout, audit: boolean): ManagedProcess {
  return startProcess('kube-apiserver', binary, [
    ...(audit ? [`--audit-policy-file=${l.auditPolicy}`, `--audit-log-path=${l.auditLog}`, '--audit-log-mode=blocking'] : []),
    `--etcd-servers=http://127.0.0.1:${l.etcdPort}`,
    // Only the test compacts etcd, so history expires exactly when a scenario asks for it.
    '--etcd-compaction-interval=0',
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${l.apiPort}`,
    `--cert-dir=${join(l.dir, 'apiserver-certs')}`,
    `--tls-cert-file=${l.pki.serverCert}`,
    `--tls-private-key-file=${l.pki.serverKey}`,
    `--client-ca-file=${l.pki.caCert}`,
    `--token-auth-file=${l.tokenFile}`,
    '--authorization-mode=RBAC',
    `--service-account-key-file=${l.pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${l.pki.serviceAccountKey}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    '--service-cluster-ip-range=10.0.0.0/24',
    // There is no controller-manager to create default service accounts for pods.
    '--disable-admission-plugins=ServiceAccount',
  ], join(l.dir, 'kube-apiserver.log'));
}

function httpGetOk(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function readyz(url: string, ca: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpsRequest(`${url}/readyz`, { ca, agent: false, timeout: 2000, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function etcdCall(etcdUrl: string, path: string, body: unknown): Promise<{ header?: { revision?: string } }> {
  const res = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`etcd ${path} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { header?: { revision?: string } };
}

export async function startRealCluster(options: RealClusterOptions): Promise<RealCluster> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 150_000;
  const l = await layout();
  const adminToken = randomBytes(24).toString('hex');
  const unprivilegedToken = randomBytes(24).toString('hex');
  if (options.auditLog === true) await writeFile(l.auditPolicy, AUDIT_POLICY);
  const writeTokens = (admin: boolean) =>
    writeFile(l.tokenFile, `${admin ? `${adminToken},vendor-admin,uid-admin,"system:masters"\n` : ''}${unprivilegedToken},vendor-nobody,uid-nobody\n`);
  await writeTokens(true);
  const url = `https://127.0.0.1:${l.apiPort}`;
  const etcdUrl = `http://127.0.0.1:${l.etcdPort}`;
  const caCert = await readFile(l.pki.caCert, 'utf8');
  const clientCert = await readFile(l.pki.clientCert, 'utf8');
  const clientKey = await readFile(l.pki.clientKey, 'utf8');

  let etcd: ManagedProcess | undefined;
  let apiserver: ManagedProcess | undefined;
  const close = async () => {
    await apiserver?.stop();
    await etcd?.stop();
    await rm(l.dir, { recursive: true, force: true });
  };
  const bootApiServer = async () => {
    apiserver = startApiServer(options.kubeApiserver, l, options.auditLog === true);
    // With a token that is never revoked: /readyz is open to every authenticated user.
    await waitUntilReady(apiserver, () => readyz(url, caCert, unprivilegedToken), readyTimeoutMs);
  };

  try {
    etcd = startEtcd(options.etcd, l, await freePort());
    await waitUntilReady(etcd, () => httpGetOk(`${etcdUrl}/health`), 30_000);
    await bootApiServer();
  } catch (err) {
    await close();
    throw err;
  }

  return {
    url,
    caCert,
    adminToken,
    unprivilegedToken,
    unprivilegedUser: 'vendor-nobody',
    clientCert,
    clientKey,
    etcdUrl,
    async writeKubeconfig(path, auth = 'token') {
      const user =
        auth === 'token'
          ? { token: adminToken }
          : { 'client-certificate-data': b64(clientCert), 'client-key-data': b64(clientKey) };
      await writeFile(path, stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'real', cluster: { server: url, 'certificate-authority-data': b64(caCert) } }],
        users: [{ name: 'vendor-admin', user }],
        contexts: [{ name: 'real', context: { cluster: 'real', user: 'vendor-admin' } }],
        'current-context': 'real',
      }), { mode: 0o600 });
      return path;
    },
    async compactEtcd() {
      // A write outside the API server's keys moves the revision past every version handed out, so
      // compacting at it expires the newest one too.
      const put = await etcdCall(etcdUrl, '/v3/kv/put', { key: b64('/vendor-test/history-tick'), value: b64(String(Date.now())) });
      const revision = Number(put.header?.revision);
      await etcdCall(etcdUrl, '/v3/kv/compaction', { revision: String(revision), physical: true });
      return revision;
    },
    async auditEvents() {
      if (options.auditLog !== true || !existsSync(l.auditLog)) return [];
      const text = await readFile(l.auditLog, 'utf8');
      // Whole lines only: the last one may be still being written.
      return text.split('\n').slice(0, -1).map((line) => JSON.parse(line) as AuditEvent);
    },
    async restartApiServer() {
      await apiserver?.stop();
      await bootApiServer();
    },
    async stopApiServer() {
      await apiserver?.stop();
      apiserver = undefined;
    },
    startApiServer: bootApiServer,
    acceptAdminToken: (accepted) => writeTokens(accepted),
    close,
  };
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
