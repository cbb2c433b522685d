import { expect } from 'vitest';
import { type Json, type KubeResponse, type RequestOptions, kubeRequest } from '../http.ts';
import type { ClusterTarget, Credentials } from '../target.ts';

/** One cluster scenario: runs against any target and asserts what a real API server does. */
export interface Scenario {
  name: string;
  /** For scenarios that wait on server-side timers or restart the server. */
  timeoutMs?: number;
  run(target: ClusterTarget): Promise<void>;
}

/** Requests as one user, with the answer's status checked. */
export function client(target: ClusterTarget, credentials: Credentials = target.auth.admin) {
  const call = (path: string, options?: RequestOptions) => kubeRequest(target, credentials, path, options);
  return {
    call,
    /** The parsed body of an answer that must have `status`. */
    async expect(status: number, path: string, options?: RequestOptions): Promise<Json> {
      const res = await call(path, options);
      expectHttp(res, status, `${options?.method ?? 'GET'} ${path}`);
      return res.body ?? {};
    },
  };
}

export type Client = ReturnType<typeof client>;

export function expectHttp(res: KubeResponse, status: number, what: string): void {
  expect(res.status, `${what} answered ${res.status}: ${res.text.slice(0, 500)}`).toBe(status);
}

/** A nested field by dotted path, e.g. `metadata.resourceVersion`. */
export function field(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Json)[key];
  }
  return current;
}

export function text(value: unknown, path: string): string {
  const found = field(value, path);
  expect(typeof found, `${path} is a string in ${JSON.stringify(value)?.slice(0, 300)}`).toBe('string');
  return found as string;
}

export function items(list: Json): Json[] {
  expect(Array.isArray(list.items), 'a list has items').toBe(true);
  return list.items as Json[];
}

export function names(list: Json): string[] {
  return items(list).map((i) => text(i, 'metadata.name'));
}

export function resourceVersion(obj: unknown): string {
  return text(obj, 'metadata.resourceVersion');
}

/** resourceVersions are opaque strings; the servers under test both use increasing integers. */
export function rvNumber(obj: unknown): number {
  return Number(resourceVersion(obj));
}

/** A Status body as kube-apiserver sends it; `details` and `message` are compared when given. */
export function expectStatusBody(
  body: unknown,
  expected: { code: number; reason: string; message?: string | RegExp; details?: Json; metadata?: Json },
) {
  const status = body as Json;
  expect(status.kind).toBe('Status');
  expect(status.apiVersion).toBe('v1');
  expect(status.metadata).toEqual(expected.metadata ?? {});
  expect(status.status).toBe('Failure');
  expect(status.code).toBe(expected.code);
  expect(status.reason).toBe(expected.reason);
  if (typeof expected.message === 'string') expect(status.message).toBe(expected.message);
  else if (expected.message) expect(status.message).toMatch(expected.message);
  if (expected.details) expect(status.details).toEqual(expected.details);
}

export async function createNamespace(c: Client, name: string): Promise<Json> {
  return c.expect(201, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
}

/** An admin client and a namespace of its own for one scenario. */
export async function newNamespace(target: ClusterTarget, prefix: string): Promise<{ c: Client; ns: string }> {
  const c = client(target);
  const ns = unique(prefix);
  await createNamespace(c, ns);
  return { c, ns };
}

export function configMap(namespace: string, name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
}

export async function createConfigMap(c: Client, namespace: string, name: string, data: Record<string, string> = {}): Promise<Json> {
  return c.expect(201, `/api/v1/namespaces/${namespace}/configmaps`, { method: 'POST', body: configMap(namespace, name, data) });
}

/** Polls until `check` returns a value (for what a server does shortly after a write, e.g. CRD discovery). */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A short suffix so scenarios can run twice against one long-lived server. */
export function unique(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
}
