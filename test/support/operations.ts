/**
 * Operations through the management API of an assignment world: submit with an Idempotency-Key,
 * and wait for the result with `?wait`.
 */
import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import type { ApiEnv } from '../../functions/auth/caller.ts';
import { TEST_ADMIN_TOKEN } from './api.ts';

export interface OperationReply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

export interface OperationView {
  id: string;
  state: string;
  attempts: number;
  agentId?: string;
  message?: string;
  errorCode?: string;
  outcomes: { index: number; kind: string; name: string; namespace?: string; result: string; message?: string; code?: number; reason?: string; generation?: number; resourceVersion?: string }[];
}

export async function submitOperation(app: Hono<ApiEnv>, account: string, body: unknown, key: string = randomUUID()): Promise<OperationReply> {
  const res = await app.request(`/vendor/accounts/${account}/operations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

export async function getOperation(app: Hono<ApiEnv>, id: string, waitSeconds = 0): Promise<OperationView> {
  const res = await app.request(`/vendor/operations/${id}${waitSeconds > 0 ? `?wait=${waitSeconds}` : ''}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
  if (res.status !== 200) throw new Error(`GET operation ${id}: ${res.status} ${await res.text()}`);
  return (await res.json()) as OperationView;
}

const FINISHED = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT']);

/** The operation once finished; gives up after `limitSeconds`. */
export async function finished(app: Hono<ApiEnv>, id: string, limitSeconds = 30): Promise<OperationView> {
  const view = await getOperation(app, id, limitSeconds);
  if (!FINISHED.has(view.state)) throw new Error(`operation ${id} still ${view.state} after ${limitSeconds} s: ${JSON.stringify(view)}`);
  return view;
}

/** Submits and waits for the result; the submission must be accepted. */
export async function run(app: Hono<ApiEnv>, account: string, body: unknown, key?: string): Promise<OperationView> {
  const reply = await submitOperation(app, account, body, key);
  if (reply.status !== 202) throw new Error(`POST operation: ${reply.status} ${JSON.stringify(reply.json)}`);
  return finished(app, reply.json.id as string);
}
