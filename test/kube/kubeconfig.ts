import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { KeyPair } from '../support/pki.ts';

/**
 * kubeconfig documents pointing at a test API server, with one of the credentials it accepts.
 */
export interface KubeconfigCredentials {
  token?: string;
  clientCertificate?: KeyPair;
}

export interface KubeconfigInput {
  server: string;
  /** PEM CA of an HTTPS server. */
  ca?: string;
  credentials: KubeconfigCredentials;
  /** Names of the cluster, user and context; `test` by default. */
  name?: string;
  namespace?: string;
  insecureSkipTlsVerify?: boolean;
}

export interface KubeconfigDocument {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: Record<string, string | boolean> }[];
  users: { name: string; user: Record<string, string> }[];
  contexts: { name: string; context: Record<string, string> }[];
  'current-context': string;
  preferences: Record<string, never>;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

export function kubeconfigDocument(input: KubeconfigInput): KubeconfigDocument {
  const name = input.name ?? 'test';
  const cluster: Record<string, string | boolean> = { server: input.server };
  if (input.ca !== undefined && input.insecureSkipTlsVerify !== true) cluster['certificate-authority-data'] = b64(input.ca);
  if (input.insecureSkipTlsVerify === true) cluster['insecure-skip-tls-verify'] = true;
  const user: Record<string, string> = {};
  if (input.credentials.token !== undefined) user.token = input.credentials.token;
  if (input.credentials.clientCertificate !== undefined) {
    user['client-certificate-data'] = b64(input.credentials.clientCertificate.cert);
    user['client-key-data'] = b64(input.credentials.clientCertificate.key);
  }
  const context: Record<string, string> = { cluster: name, user: name };
  if (input.namespace !== undefined) context.namespace = input.namespace;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context }],
    'current-context': name,
    preferences: {},
  };
}

export function kubeconfigYaml(doc: KubeconfigDocument): string {
  return stringify(doc);
}

export function writeKubeconfigFile(path: string, doc: KubeconfigDocument): string {
  writeFileSync(path, kubeconfigYaml(doc), { mode: 0o600 });
  return path;
}
