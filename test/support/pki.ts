/**
 * Throw-away certificates for TLS tests, made with the `openssl` command (node:crypto can make keys
 * but not X.509 certificates). Keys are P-256 and PKCS#8; certificates are valid for two days unless
 * a caller asks otherwise. The shapes the tests need are built on the same steps (a CA, a certificate
 * it issues):
 *
 * - `makePki()`: the files the driver and agent TLS suites use;
 * - `makeClusterPki(dir)`: what a real kube-apiserver needs;
 * - `createCertificateAuthority()`: a CA held in memory, issuing PEM pairs on demand (the test API
 *   server). Subjects follow Kubernetes' reading of client certificates: CN is the user, each O a group;
 * - `selfSignedCertificate()`: one self-signed server certificate (the vault double over TLS).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function openssl(dir: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args[0] ?? ''} failed: ${stderr.trim() || (e as Error).message}`, { cause: e });
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** `/CN=<cn>/O=<org>...`, with the characters openssl reads as separators escaped. */
export function subjectOf(commonName: string, organizations: readonly string[] = []): string {
  const escape = (s: string): string => s.replace(/[/\\=+,]/g, (c) => `\\${c}`);
  return `/CN=${escape(commonName)}${organizations.map((o) => `/O=${escape(o)}`).join('')}`;
}

/** A self-signed CA in `dir`: `<name>.pem` and `<name>.key`. */
function certificateAuthority(dir: string, name: string, subject = `/CN=${name}`): void {
  openssl(dir, [
    'req', '-x509', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', subject,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  ]);
}

/** A certificate in `dir` issued by the CA `<issuer>.pem`/`<issuer>.key`: `<name>.pem` and `<name>.key`. */
function issueCertificate(dir: string, name: string, issuer: string, subject: string, extensions: readonly string[], days = 2): void {
  writeFileSync(join(dir, `${name}.ext`), extensions.map((e) => `${e}\n`).join(''));
  openssl(dir, ['req', '-new', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-CAcreateserial',
    '-days', String(days), '-extfile', `${name}.ext`, '-out', `${name}.pem`,
  ]);
}

// ---- the driver and agent TLS suites ----

export interface Pki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** The server key encrypted with `serverKeyPassword`. */
  serverKeyEncrypted: string;
  serverKeyPassword: string;
  /** A server certificate naming only `driver.internal`, for server-name override tests. */
  namedServerCert: string;
  namedServerKey: string;
  clientCaCert: string;
  /** Signed by the client CA. */
  clientCert: string;
  clientKey: string;
  /** The client key encrypted with `clientKeyPassword`. */
  clientKeyEncrypted: string;
  clientKeyPassword: string;
  /** Certificate and key in one PEM file. */
  clientCertAndKey: string;
  /** A CA that signed only the stranger's certificate, for "wrong trust store" cases. */
  strangerCaCert: string;
  strangerClientCert: string;
  strangerClientKey: string;
}

/**
 * A CA with a server certificate for `localhost`/127.0.0.1 and `driver.internal`, one for
 * `driver.internal` alone, a client CA with a client certificate whose key is also written encrypted,
 * and an unrelated CA whose certificates nobody trusts.
 */
export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'pki-'));
  certificateAuthority(dir, 'ca');
  certificateAuthority(dir, 'client-ca');
  certificateAuthority(dir, 'stranger-ca');
  const server = ['extendedKeyUsage=serverAuth'];
  issueCertificate(dir, 'server', 'ca', '/CN=server', ['subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:driver.internal', ...server]);
  issueCertificate(dir, 'named-server', 'ca', '/CN=named-server', ['subjectAltName=DNS:driver.internal', ...server]);
  issueCertificate(dir, 'client', 'client-ca', '/CN=client', ['extendedKeyUsage=clientAuth']);
  issueCertificate(dir, 'stranger', 'stranger-ca', '/CN=stranger', ['extendedKeyUsage=clientAuth']);
  const clientKeyPassword = 'client-key-password';
  const serverKeyPassword = 'server-key-password';
  openssl(dir, ['pkcs8', '-topk8', '-in', 'client.key', '-passout', `pass:${clientKeyPassword}`, '-out', 'client.enc.key']);
  openssl(dir, ['pkcs8', '-topk8', '-in', 'server.key', '-passout', `pass:${serverKeyPassword}`, '-out', 'server.enc.key']);
  writeFileSync(join(dir, 'client-bundle.pem'), readFileSync(join(dir, 'client.pem'), 'utf8') + readFileSync(join(dir, 'client.key'), 'utf8'));
  const p = (f: string) => join(dir, f);
  return {
    dir,
    caCert: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    serverKeyEncrypted: p('server.enc.key'),
    serverKeyPassword,
    namedServerCert: p('named-server.pem'),
    namedServerKey: p('named-server.key'),
    clientCaCert: p('client-ca.pem'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    clientKeyEncrypted: p('client.enc.key'),
    clientKeyPassword,
    clientCertAndKey: p('client-bundle.pem'),
    strangerCaCert: p('stranger-ca.pem'),
    strangerClientCert: p('stranger.pem'),
    strangerClientKey: p('stranger.key'),
  };
}

/**
 * A client certificate made on demand in `pki.dir`, signed by the client CA (or the stranger CA
 * nobody trusts), with `subjectAltName` as given (e.g. `URI:urn:vendor-agent:identity:edge`).
 */
export function clientCertificate(pki: Pki, name: string, subjectAltName: string | undefined, issuer: 'client-ca' | 'stranger-ca' = 'client-ca'): { cert: string; key: string } {
  issueCertificate(pki.dir, name, issuer, `/CN=${name}`, [...(subjectAltName === undefined ? [] : [`subjectAltName=${subjectAltName}`]), 'extendedKeyUsage=clientAuth']);
  return { cert: join(pki.dir, `${name}.pem`), key: join(pki.dir, `${name}.key`) };
}

// ---- a real kube-apiserver ----

/** File paths of the certificates and keys a real API server needs; all PEM. */
export interface ClusterPki {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  /** A client certificate of the `system:masters` group, signed by the CA. */
  clientCert: string;
  clientKey: string;
  /** The service-account token signing key pair. */
  serviceAccountKey: string;
  serviceAccountPub: string;
}

/**
 * Makes in `dir` a CA, a serving certificate for 127.0.0.1/localhost, an admin client certificate
 * and a service-account key pair (openssl is present wherever kube-apiserver can be built or run).
 */
export async function makeClusterPki(dir: string): Promise<ClusterPki> {
  certificateAuthority(dir, 'ca', '/CN=vendor-agent-test-ca');
  issueCertificate(dir, 'server', 'ca', '/CN=kube-apiserver', ['subjectAltName=IP:127.0.0.1,DNS:localhost', 'extendedKeyUsage=serverAuth', 'keyUsage=digitalSignature']);
  issueCertificate(dir, 'client', 'ca', subjectOf('vendor-admin', ['system:masters']), ['extendedKeyUsage=clientAuth', 'keyUsage=digitalSignature']);
  openssl(dir, ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key']);
  openssl(dir, ['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  const p = (f: string) => join(dir, f);
  return {
    caCert: p('ca.pem'), caKey: p('ca.key'),
    serverCert: p('server.pem'), serverKey: p('server.key'),
    clientCert: p('client.pem'), clientKey: p('client.key'),
    serviceAccountKey: p('sa.key'), serviceAccountPub: p('sa.pub'),
  };
}

// ---- a CA in memory (the test API server) ----

export interface KeyPair {
  /** PEM certificate. */
  cert: string;
  /** PEM private key (PKCS#8). */
  key: string;
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  /** Validity in days; 1 by default. */
  days?: number;
}

export interface CertificateAuthority extends KeyPair {
  issue(options: IssueOptions): KeyPair;
}

function withDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'kube-certs-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readPair(dir: string, name: string): KeyPair {
  return { cert: readFileSync(join(dir, `${name}.pem`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

export function createCertificateAuthority(commonName = 'test-kube-ca'): CertificateAuthority {
  const ca = withDir((dir) => {
    certificateAuthority(dir, 'ca', subjectOf(commonName));
    return readPair(dir, 'ca');
  });
  return { ...ca, issue: (options) => issue(ca, options) };
}

function issue(ca: KeyPair, options: IssueOptions): KeyPair {
  return withDir((dir) => {
    writeFileSync(join(dir, 'ca.pem'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key, { mode: 0o600 });
    const sans = [...(options.dnsNames ?? []).map((d) => `DNS:${d}`), ...(options.ipAddresses ?? []).map((ip) => `IP:${ip}`)];
    issueCertificate(dir, 'leaf', 'ca', subjectOf(options.commonName, options.organizations), [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth,clientAuth',
      ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
    ], options.days ?? 1);
    return readPair(dir, 'leaf');
  });
}

// ---- a self-signed server (the vault double over TLS) ----

export interface TestCertificate extends KeyPair {
  /** Path of the certificate file, to configure as a trusted CA or as a client certificate. */
  certFile: string;
  keyFile: string;
  remove(): void;
}

/** A self-signed certificate for 127.0.0.1 and localhost. */
export function selfSignedCertificate(): TestCertificate {
  const folder = mkdtempSync(join(tmpdir(), 'vault-tls-'));
  openssl(folder, [
    'req', '-x509', ...EC_KEY, '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2', '-subj', '/CN=vault-test',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  const certFile = join(folder, 'cert.pem');
  const keyFile = join(folder, 'key.pem');
  return {
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}
