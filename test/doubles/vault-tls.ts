import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  cert: string;
  key: string;
  /** Path of the certificate file, to configure as a trusted CA or as a client certificate. */
  certFile: string;
  keyFile: string;
  remove(): void;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI for a TLS test double. */
export function selfSignedCertificate(): TestCertificate {
  const folder = mkdtempSync(join(tmpdir(), 'vault-tls-'));
  const certFile = join(folder, 'cert.pem');
  const keyFile = join(folder, 'key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=vault-test',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: 'ignore' });
  return {
    cert: readFileSync(certFile, 'utf8'),
    key: readFileSync(keyFile, 'utf8'),
    certFile,
    keyFile,
    remove: () => rmSync(folder, { recursive: true, force: true }),
  };
}
