/**
 * Throw-away certificates for TLS tests, made with the openssl command line: a CA, a server
 * certificate for `localhost`/127.0.0.1 and `driver.internal`, one for `driver.internal` alone (for
 * server-name tests), a client CA with a client certificate whose key is also written encrypted, and an
 * unrelated CA whose certificates nobody trusts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  /** A server certificate naming only `driver.internal`, for server-name override tests. */
  /** The server key encrypted with `serverKeyPassword`. */
  serverKeyEncrypted: string;
  serverKeyPassword: string;
  namedServerCert: string;
  namedServerKey: string;
  clientCaCert: string;
  clientCert: string;
  clientKey: string;
  /** The client key encrypted with `clientKeyPassword`. */
  clientKeyEncrypted: string;
  clientKeyPassword: string;
  /** Certificate and key in one PEM file. */
  clientCertAndKey: string;
  strangerCaCert: string;
  strangerClientCert: string;
  strangerClientKey: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function ca(dir: string, name: string): void {
  openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.key`]);
  openssl(dir, ['req', '-x509', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-days', '2', '-out', `${name}.pem`]);
}

function leaf(dir: string, name: string, issuer: string, ext: string): void {
  openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}.ec.key`]);
  openssl(dir, ['pkcs8', '-topk8', '-nocrypt', '-in', `${name}.ec.key`, '-out', `${name}.key`]);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', `/CN=${name}`, '-out', `${name}.csr`]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, [
    'x509', '-req', '-in', `${name}.csr`, '-CA', `${issuer}.pem`, '-CAkey', `${issuer}.key`, '-CAcreateserial',
    '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.pem`,
  ]);
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'pki-'));
  ca(dir, 'ca');
  ca(dir, 'client-ca');
  ca(dir, 'stranger-ca');
  leaf(dir, 'server', 'ca', 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:driver.internal\nextendedKeyUsage=serverAuth\n');
  leaf(dir, 'named-server', 'ca', 'subjectAltName=DNS:driver.internal\nextendedKeyUsage=serverAuth\n');
  leaf(dir, 'client', 'client-ca', 'extendedKeyUsage=clientAuth\n');
  leaf(dir, 'stranger', 'stranger-ca', 'extendedKeyUsage=clientAuth\n');
  const password = 'client-key-password';
  openssl(dir, ['pkcs8', '-topk8', '-in', 'client.key', '-passout', `pass:${password}`, '-out', 'client.enc.key']);
  openssl(dir, ['pkcs8', '-topk8', '-in', 'server.key', '-passout', 'pass:server-key-password', '-out', 'server.enc.key']);
  execFileSync('sh', ['-c', 'cat client.pem client.key > client-bundle.pem'], { cwd: dir });
  const p = (f: string) => join(dir, f);
  return {
    dir,
    caCert: p('ca.pem'),
    serverCert: p('server.pem'),
    serverKey: p('server.key'),
    serverKeyEncrypted: p('server.enc.key'),
    serverKeyPassword: 'server-key-password',
    namedServerCert: p('named-server.pem'),
    namedServerKey: p('named-server.key'),
    clientCaCert: p('client-ca.pem'),
    clientCert: p('client.pem'),
    clientKey: p('client.key'),
    clientKeyEncrypted: p('client.enc.key'),
    clientKeyPassword: password,
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
  leaf(pki.dir, name, issuer, `${subjectAltName === undefined ? '' : `subjectAltName=${subjectAltName}\n`}extendedKeyUsage=clientAuth\n`);
  return { cert: join(pki.dir, `${name}.pem`), key: join(pki.dir, `${name}.key`) };
}
