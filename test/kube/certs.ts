import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VendorError } from '../../shared/errors.ts';

/**
 * Certificates for tests: a throw-away certificate authority and certificates it issues, made with
 * the `openssl` command (node:crypto can make keys but not X.509 certificates). Keys are P-256.
 * Subjects follow Kubernetes' reading of client certificates: CN is the user, each O a group.
 */
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

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    const stderr = (e as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new VendorError('internal', `openssl ${args[0] ?? ''} failed: ${stderr.trim() || (e as Error).message}`, { cause: e });
  }
}

function subject(cn: string, orgs: readonly string[] = []): string {
  const escape = (s: string): string => s.replace(/[/\\=+,]/g, (c) => `\\${c}`);
  return `/CN=${escape(cn)}${orgs.map((o) => `/O=${escape(o)}`).join('')}`;
}

function withDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'kube-certs-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function createCertificateAuthority(commonName = 'test-kube-ca'): CertificateAuthority {
  const ca = withDir((dir) => {
    openssl(
      ['req', '-x509', ...EC_KEY, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', subject(commonName),
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'],
      dir,
    );
    return { cert: readFileSync(join(dir, 'ca.crt'), 'utf8'), key: readFileSync(join(dir, 'ca.key'), 'utf8') };
  });
  return { ...ca, issue: (options) => issue(ca, options) };
}

function issue(ca: KeyPair, options: IssueOptions): KeyPair {
  return withDir((dir) => {
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'ca.key'), ca.key, { mode: 0o600 });
    const sans = [...(options.dnsNames ?? []).map((d) => `DNS:${d}`), ...(options.ipAddresses ?? []).map((ip) => `IP:${ip}`)];
    const ext = [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth,clientAuth',
      ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
    ];
    writeFileSync(join(dir, 'ext.cnf'), ext.join('\n') + '\n');
    openssl(['req', '-new', ...EC_KEY, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', subject(options.commonName, options.organizations)], dir);
    openssl(
      ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.crt',
        '-days', String(options.days ?? 1), '-extfile', 'ext.cnf'],
      dir,
    );
    return { cert: readFileSync(join(dir, 'leaf.crt'), 'utf8'), key: readFileSync(join(dir, 'leaf.key'), 'utf8') };
  });
}
