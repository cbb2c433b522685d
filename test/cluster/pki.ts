import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** File paths of the certificates and keys a test API server needs; all PEM. */
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

async function openssl(args: string[]): Promise<void> {
  await run('openssl', args, { timeout: 30_000 });
}

async function ecKey(path: string): Promise<void> {
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', path]);
}

async function signedCert(dir: string, pki: Pick<ClusterPki, 'caCert' | 'caKey'>, name: string, subject: string, extensions: string) {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const ext = join(dir, `${name}.ext`);
  await ecKey(key);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  await writeFile(ext, extensions);
  await openssl(['x509', '-req', '-in', csr, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial',
    '-days', '2', '-extfile', ext, '-out', cert]);
  return { cert, key };
}

/**
 * Makes a CA, a serving certificate for 127.0.0.1/localhost, an admin client certificate and a
 * service-account key pair with openssl (present wherever kube-apiserver can be built or run).
 */
export async function makeClusterPki(dir: string): Promise<ClusterPki> {
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  await ecKey(caKey);
  await openssl(['req', '-x509', '-new', '-key', caKey, '-subj', '/CN=vendor-agent-test-ca', '-days', '2', '-out', caCert]);
  const ca = { caCert, caKey };
  const server = await signedCert(dir, ca, 'server', '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature\n');
  const client = await signedCert(dir, ca, 'client', '/O=system:masters/CN=vendor-admin',
    'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature\n');
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPub = join(dir, 'sa.pub');
  await openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', serviceAccountKey]);
  await openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPub]);
  return {
    caCert, caKey,
    serverCert: server.cert, serverKey: server.key,
    clientCert: client.cert, clientKey: client.key,
    serviceAccountKey, serviceAccountPub,
  };
}

export async function readPem(path: string): Promise<string> {
  return readFile(path, 'utf8');
}
