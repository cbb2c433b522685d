import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** File paths of a throw-away PKI for TLS tests: one CA, a server certificate for localhost/127.0.0.1, a client certificate. */
export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** The server key encrypted with `passphrase`. */
  serverKeyEncrypted: string;
  passphrase: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing here, for "wrong trust store" cases. */
  otherCaCert: string;
  read(path: string): Buffer;
}

function openssl(dir: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

function ca(dir: string, name: string): void {
  openssl(dir, 'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`);
}

function leaf(dir: string, name: string, ext: string): void {
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, 'req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
  openssl(dir, 'x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`);
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'pki-'));
  const passphrase = 'test-key-passphrase';
  ca(dir, 'ca');
  ca(dir, 'other-ca');
  leaf(dir, 'server', 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  leaf(dir, 'client', 'extendedKeyUsage=clientAuth\n');
  openssl(dir, 'pkey', '-in', 'server.key', '-aes256', '-passout', `pass:${passphrase}`, '-out', 'server-encrypted.key');
  const at = (f: string) => join(dir, f);
  return {
    dir,
    caCert: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    serverKeyEncrypted: at('server-encrypted.key'),
    passphrase,
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    otherCaCert: at('other-ca.pem'),
    read: (path) => readFileSync(path),
  };
}
