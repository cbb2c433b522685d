/**
 * The agent's view of one cluster API server: how to reach it (a `ClusterSpec`, from
 * `kubernetes.accounts[]` or from an assignment) and what talking to it looks like (`ClusterClient`).
 * Everything that reads from or writes to a cluster goes through a `ClusterClient`, so credentials,
 * proxies, TLS and the retry rules of `kubernetes.retries.*` are applied in one place.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { KubeconfigPolicy } from './assigned-kubeconfig.ts';

/** How to connect to one account's cluster (the connection keys of a `kubernetes.accounts[]` entry). */
export interface ClusterSpec {
  /** Account name, for messages and logs. */
  account: string;
  /** A kubeconfig path or an `encrypted:` / `encryptedFile:` reference; unset with `serviceAccount`. */
  kubeConfigFile?: string | undefined;
  /** Context of the kubeconfig; empty: its current context. */
  context: string;
  serviceAccount: boolean;
  insecure: boolean;
  noProxy: boolean;
  oAuthScopes: readonly string[];
  /**
   * For an account the driver assigns: what its kubeconfig may read and run
   * (`kubernetes.assignedAccounts`). Unset for the agent's own accounts, which its operator wrote.
   */
  policy?: KubeconfigPolicy | undefined;
}

/** `kubernetes.retries.*` of vendor-agent.yml (docs/agent-config.md#kubernetes-wide-settings). */
export interface RetrySettings {
  enabled: boolean;
  /** Number of tries of the same request. */
  maxRetries: number;
  backOffMs: number;
  retryAnyError: boolean;
  retryableErrors: readonly string[];
}

export const DEFAULT_RETRY_SETTINGS: RetrySettings = {
  enabled: true,
  maxRetries: 3,
  backOffMs: 3000,
  retryAnyError: false,
  retryableErrors: ['timeout', 'deadline exceeded'],
};

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  /** Query parameters; undefined values are left out. */
  query?: Readonly<Record<string, QueryValue>>;
  /** Extra headers, e.g. `content-type` for a patch. */
  headers?: Readonly<Record<string, string>>;
  /** A serialized body; a plain object is sent as JSON. */
  body?: string | Uint8Array | object;
  signal?: AbortSignal;
  /** Gives up on a request that has not completed after this many ms; 0 or unset: no limit. */
  timeoutMs?: number;
  /** Whether `kubernetes.retries.*` apply (default true). Watches are never retried here. */
  retry?: boolean;
  /** Told when the request is written to its socket and when its answer has been read (agent/operations/trace.ts). */
  trace?: { written(): void; answered(): void };
}

export interface KubeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json<T = unknown>(): T;
}

/** An open streaming response (a watch): one JSON document per line. */
export interface KubeStream {
  status: number;
  headers: IncomingHttpHeaders;
  /**
   * The lines of the body as they arrive; ends when the server ends the response or `close()` is
   * called. `batches` gives the same lines as they arrived, whole lines each ending with a newline,
   * in buffers of their own (`splitLines` splits them); read one or the other.
   */
  lines: AsyncIterable<string>;
  batches: AsyncIterable<Buffer>;
  close(): void;
}

export interface ServerVersion {
  major: string;
  minor: string;
  gitVersion: string;
  [key: string]: unknown;
}

export interface ClusterClient {
  readonly account: string;
  /** The API server URL, e.g. `https://10.0.0.1:443`. */
  readonly server: string;
  /**
   * Equal for clients of the same API server with the same credentials (accounts on one cluster),
   * so what is learnt of the server is learnt once: a digest, never the credentials themselves.
   */
  readonly identity?: string;
  /**
   * Sends a request and reads the whole answer. A non-2xx answer or a transport failure is a
   * `VendorError` (see `kubeErrorStatus()`), after the tries `kubernetes.retries.*` allow.
   */
  request(req: KubeRequest): Promise<KubeResponse>;
  /** Opens a streaming GET (a watch). A non-2xx answer is a `VendorError`; no retries. */
  stream(req: KubeRequest): Promise<KubeStream>;
  /** GET /version: proves the credentials, TLS and route work. */
  version(signal?: AbortSignal): Promise<ServerVersion>;
  /** Frees sockets; requests after it fail. */
  close(): void;
}
