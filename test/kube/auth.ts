import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { VendorError } from '../../shared/errors.ts';
import type { RequestInfo } from './faults.ts';
import { forbidden, type StatusError, unauthorized } from './status.ts';

/**
 * Authentication as kube-apiserver does it for the two methods clusters hand out in kubeconfigs:
 * bearer tokens (a static token file) and client certificates signed by the cluster CA (CN is the
 * user name, each O a group). Authorization is a hook so tests can model RBAC outcomes.
 */
export interface UserInfo {
  username: string;
  groups: string[];
}

export interface AuthOptions {
  /** Token -> user. A string value is a user name without groups. */
  tokens?: Record<string, UserInfo | string>;
  /** A kube-apiserver static token file (`--token-auth-file`): lines `token,user,uid[,"group1,group2"]`. */
  tokenFile?: string;
  /** Accept client certificates issued by the server's CA (TLS servers only). */
  clientCertificates?: boolean;
  /** Requests without credentials are `system:anonymous` instead of 401. */
  anonymous?: boolean;
}

/** What a request does and to what: verb, group, resource, subresource, namespace, name. */
export type RequestAttributes = Omit<RequestInfo, 'path'>;

/** Returns true to allow; false answers 403 with kube-apiserver's RBAC message. */
export type Authorizer = (user: UserInfo, attributes: RequestAttributes) => boolean;

export const ADMIN_USER: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

function fromCertificate(req: IncomingMessage): UserInfo | undefined | 'invalid' {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== 'function') return undefined;
  const cert = socket.getPeerCertificate();
  if (cert === null || Object.keys(cert).length === 0) return undefined;
  if (socket.authorized !== true) return 'invalid';
  const subject = cert.subject as unknown as Record<string, string | string[] | undefined>;
  const cn = subject.CN;
  const o = subject.O;
  const username = Array.isArray(cn) ? (cn[0] ?? '') : (cn ?? '');
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { username, groups: [...groups, 'system:authenticated'] };
}

/** Reads a static token file in kube-apiserver's CSV form; blank lines and `#` comments are skipped. */
export function readTokenFile(path: string): Record<string, UserInfo> {
  const out: Record<string, UserInfo> = {};
  readFileSync(path, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = /^([^,]+),([^,]+),([^,]*)(?:,"?([^"]*)"?)?$/.exec(line);
    if (m === null) throw new VendorError('invalid_input', `token file ${path} line ${i + 1}: expected token,user,uid[,"groups"]`);
    const groups = (m[4] ?? '').split(',').map((g) => g.trim()).filter((g) => g !== '');
    out[m[1] ?? ''] = { username: m[2] ?? '', groups };
  });
  return out;
}

/** Folds `tokenFile` into `tokens`, once at start. */
export function resolveAuth(options: AuthOptions | undefined): AuthOptions | undefined {
  if (options?.tokenFile === undefined) return options;
  return { ...options, tokens: { ...readTokenFile(options.tokenFile), ...options.tokens } };
}

/** The user of a request; throws the 401 Status for missing or bad credentials. */
export function authenticate(req: IncomingMessage, options: AuthOptions | undefined): UserInfo {
  if (options === undefined) return ADMIN_USER;
  const header = req.headers.authorization;
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const entry = m === null ? undefined : options.tokens?.[m[1] ?? ''];
    if (entry === undefined) throw unauthorized();
    return typeof entry === 'string'
      ? { username: entry, groups: ['system:authenticated'] }
      : { username: entry.username, groups: [...entry.groups, 'system:authenticated'] };
  }
  if (options.clientCertificates === true) {
    const user = fromCertificate(req);
    if (user === 'invalid') throw unauthorized();
    if (user !== undefined) return user;
  }
  if (options.anonymous === true) return ANONYMOUS;
  throw unauthorized();
}

export function forbiddenFor(user: UserInfo, a: RequestAttributes): StatusError {
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const scope = a.namespace === '' ? 'at the cluster scope' : `in the namespace "${a.namespace}"`;
  const qualifiedResource = a.group === '' ? a.resource : `${a.resource}.${a.group}`;
  const what = a.name === '' ? qualifiedResource : `${qualifiedResource} "${a.name}"`;
  const message = `${what} is forbidden: User "${user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.group}" ${scope}`;
  const details = a.group === '' ? { name: a.name, kind: a.resource } : { name: a.name, group: a.group, kind: a.resource };
  if (a.name === '') delete (details as { name?: string }).name;
  return forbidden(message, details);
}

/**
 * Paths that are not resources, as every cluster's default roles grant them: discovery to any
 * authenticated user (system:discovery), `/version` also to anonymous ones (system:public-info-viewer).
 */
export function mayReadDocument(user: UserInfo, path: string): boolean {
  return user.groups.includes('system:authenticated') || path === '/version' || path === '/version/';
}

export function forbiddenPath(user: UserInfo, method: string, path: string): StatusError {
  return forbidden(`forbidden: User "${user.username}" cannot ${method.toLowerCase()} path "${path}"`, {});
}
