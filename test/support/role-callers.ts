/**
 * Calls to the management app as callers holding given roles: an OIDC issuer started for the suite,
 * and a client that sends the admin token until told to speak for someone else.
 */
import type { Hono } from 'hono';
import { afterAll, beforeAll } from 'vitest';
import { TEST_ADMIN_TOKEN } from './api.ts';
import { TestIssuer } from './oidc.ts';

/** An issuer for the suite; `token(sub, roles)` signs a token with `roles` as its groups. */
export function useRoleIssuer() {
  let issuer: TestIssuer | undefined;
  let kid = '';
  beforeAll(async () => {
    issuer = await TestIssuer.start();
    kid = await issuer.addKey('ES256');
  });
  afterAll(() => issuer?.close());
  return {
    issuer: () => issuer as TestIssuer,
    token: (sub: string, ...groups: string[]) => (issuer as TestIssuer).token({ sub, groups }, { kid }),
  };
}

export interface Reply {
  status: number;
  type: string | null;
  json: Record<string, unknown>;
}

/** Requests to `app` with the admin token, or with the bearer given to `as`. */
export function appClient(app: Hono<never> | { request: Hono['request'] }) {
  let token = TEST_ADMIN_TOKEN;
  return {
    async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
      const res = await app.request(path, { method, headers: { authorization: `Bearer ${token}`, ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, type: res.headers.get('content-type'), json: (await res.json()) as Record<string, unknown> };
    },
    as(bearer: string) {
      token = bearer;
    },
  };
}
