import { forgetToken, storedToken } from './session.ts';

/** One problem the API stated (RFC 9457, docs/api.md#errors), with its field errors. */
export interface FieldError {
  path: string;
  message: string;
}

export class ApiProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  readonly code: string;
  readonly errors: FieldError[];
  readonly body: Record<string, unknown>;

  constructor(status: number, body: Record<string, unknown>) {
    const title = typeof body.title === 'string' ? body.title : `HTTP ${status}`;
    const detail = typeof body.detail === 'string' ? body.detail : '';
    super(detail === '' ? title : `${title}: ${detail}`);
    this.status = status;
    this.title = title;
    this.detail = detail;
    this.code = typeof body.code === 'string' ? body.code : '';
    this.errors = Array.isArray(body.errors) ? body.errors.filter((e): e is FieldError => typeof e?.path === 'string' && typeof e?.message === 'string') : [];
    this.body = body;
  }
}

/** The API could not be reached at all (offline, the server down, the connection cut). */
export class NetworkFailure extends Error {}

type Unauthenticated = () => void;
let onUnauthenticated: Unauthenticated = () => {};

/** What to do when the API answers 401: the token is no good any more, so back to sign-in. */
export function whenUnauthenticated(handler: Unauthenticated): void {
  onUnauthenticated = handler;
}

export interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A request to the API with the stored bearer token; a problem answer throws ApiProblem. */
export async function apiRequest<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const token = storedToken();
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new NetworkFailure('The API could not be reached: check the network and that the control plane is running.');
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    body = { title: `HTTP ${res.status}`, detail: 'the answer was not JSON' };
  }
  if (res.status === 401) {
    forgetToken();
    onUnauthenticated();
  }
  if (!res.ok) throw new ApiProblem(res.status, typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {});
  return body as T;
}

export const apiGet = <T>(path: string, signal?: AbortSignal): Promise<T> => apiRequest<T>('GET', path, signal === undefined ? {} : { signal });

/** `path` with the query parameters that have a value. */
export function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, String(value));
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

export const enc = encodeURIComponent;
