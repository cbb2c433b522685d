import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { tokenDigest } from '../../shared/agents/tokens.ts';
import { getToken, listIdentities, listTokens } from '../../shared/table/agents/identities.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { apiFixture } from '../../test/support/api.ts';
import { TestIssuer, oidcConfig } from '../../test/support/oidc.ts';
import { TestTables } from '../../test/support/table.ts';
import { createApiAuth } from '../auth/authenticator.ts';
import { identityListSchema, identityViewSchema, issuedTokenSchema, revokedTokenSchema, tokenListSchema } from '../../shared/answers/agent-identities.ts';

const tables = new TestTables();
let issuer: TestIssuer;
let kid: string;
beforeAll(async () => {
  await tables.start();
  issuer = await TestIssuer.start();
  kid = await issuer.addKey('ES256');
});
afterAll(async () => {
  await issuer.close();
  await tables.close();
});

async function app() {
  const clock = new ManualClock(1_700_000_000_000);
  const capture = captureLogger();
  const auth = createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: ['vendor-admins'] }, { production: false, clock, logger: capture.log });
  const f = await apiFixture(tables, [], { auth, logger: capture.log });
  issuer.now = () => Math.floor(clock.now() / 1000);
  const manager = await issuer.token({ sub: 'admin', groups: ['vendor-admins'] }, { kid });
  const reader = await issuer.token({ sub: 'dev', groups: ['dev'] }, { kid });
  return { ...f, clock: f.clock, capture, manager, reader };
}

const BASE = '/vendor/agent-identities';

/** The answer is exactly what its schema (and so the OpenAPI document) says: nothing missing, nothing of another type, nothing more. */
function conforms(schema: v.GenericSchema, answer: { status: number; json: unknown }, route: string): void {
  expect(answer.status, route).toBeLessThan(300);
  const checked = v.safeParse(schema, answer.json);
  expect(checked.issues?.map((i) => `${v.getDotPath(i) ?? ''}: ${i.message}`), route).toBeUndefined();
  // The schemas are not strict, so parsing drops what they do not name: an extra field fails here.
  expect(checked.output, route).toEqual(answer.json);
}

describe('agent identity routes', () => {
  it('creates (201), changes (200), reads and lists identities; omitted allowances allow nothing', async () => {
    const f = await app();
    const created = await f.call('PUT', `${BASE}/edge`, { zones: ['edge-*'], agentIds: ['edge-agent-*'] }, f.manager);
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      name: 'edge',
      zones: ['edge-*'],
      unzoned: false,
      agentIds: ['edge-agent-*'],
      staticAccounts: [],
      createdAt: '2023-11-14T22:13:20.000Z',
      updatedAt: '2023-11-14T22:13:20.000Z',
    });
    f.clock.advance(1000);
    const changed = await f.call('PUT', `${BASE}/edge`, { zones: ['edge-1'], unzoned: true }, f.manager);
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ zones: ['edge-1'], unzoned: true, agentIds: [], createdAt: '2023-11-14T22:13:20.000Z', updatedAt: '2023-11-14T22:13:21.000Z' });
    expect((await f.call('GET', `${BASE}/edge`, undefined, f.manager)).json).toEqual(changed.json);
    expect((await f.call('GET', BASE, undefined, f.manager)).json).toEqual({ items: [changed.json] });
    expect((await f.call('GET', `${BASE}/nope`, undefined, f.manager)).status).toBe(404);
  });

  it('refuses bad input with 400 naming each problem, and stores nothing', async () => {
    const f = await app();
    const bad = await f.call('PUT', `${BASE}/edge`, { zones: ['a b', 7], unzoned: 'yes', colour: 'red' }, f.manager);
    expect(bad.status).toBe(400);
    expect(bad.type).toBe('application/problem+json');
    expect((bad.json.errors as { path: string }[]).map((e) => e.path).sort()).toEqual(['colour', 'unzoned', 'zones[0]', 'zones[1]']);
    expect((await f.call('PUT', `${BASE}/-bad-`, {}, f.manager)).status).toBe(400);
    expect((await f.call('PUT', `${BASE}/edge`, '{not json', f.manager)).status).toBe(400);
    expect((await f.call('PUT', `${BASE}/edge`, { zones: Array.from({ length: 101 }, (_, i) => `z${i}`) }, f.manager)).status).toBe(400);
    expect(await listIdentities(f.table)).toEqual([]);
    await f.call('PUT', `${BASE}/edge`, {}, f.manager);
    const badToken = await f.call('POST', `${BASE}/edge/tokens`, { expiresInSeconds: 5 }, f.manager);
    expect(badToken.status).toBe(400);
    expect((await f.call('POST', `${BASE}/edge/tokens`, { lifetime: 600 }, f.manager)).status).toBe(400);
    expect(await listTokens(f.table)).toEqual([]);
  });

  it('shows a token once, keeps only its digest, and lists ids, times and expiry alone', async () => {
    const f = await app();
    await f.call('PUT', `${BASE}/edge`, { zones: ['edge-*'] }, f.manager);
    const issued = await f.call('POST', `${BASE}/edge/tokens`, { expiresInSeconds: 3600 }, f.manager);
    expect(issued.status).toBe(201);
    const token = issued.json.token as string;
    const tokenId = issued.json.tokenId as string;
    expect(token.startsWith(`vat_${tokenId}_`)).toBe(true);
    expect(issued.json).toMatchObject({ identity: 'edge', expiresAt: '2023-11-14T23:13:20.000Z', expired: false });
    const stored = await getToken(f.table, tokenId);
    expect(stored?.digest).toBe(tokenDigest(token));
    expect(JSON.stringify(stored)).not.toContain(token.slice(17));
    const other = await f.call('POST', `${BASE}/edge/tokens`, undefined, f.manager);
    expect(other.status).toBe(201);
    expect(other.json).not.toHaveProperty('expiresAt');

    f.clock.advance(3600_000);
    const listed = await f.call('GET', `${BASE}/edge/tokens`, undefined, f.manager);
    const text = JSON.stringify(listed.json);
    expect(text).not.toContain(token.slice(17));
    expect(text).not.toContain(stored?.digest);
    expect(text).not.toContain(other.json.token as string);
    const items = listed.json.items as Record<string, unknown>[];
    expect(items.find((i) => i.tokenId === tokenId)).toEqual({ tokenId, createdAt: '2023-11-14T22:13:20.000Z', expiresAt: '2023-11-14T23:13:20.000Z', expired: true });
    expect(Object.keys(items.find((i) => i.tokenId === other.json.tokenId) ?? {}).sort()).toEqual(['createdAt', 'expired', 'tokenId']);
    // Issuing is logged with who asked and the token's id, never the token.
    expect(f.capture.lines.filter((l) => l.msg === 'agent token issued').map((l) => [l.subject, l.identity, l.tokenId])).toEqual([
      ['admin', 'edge', tokenId],
      ['admin', 'edge', other.json.tokenId],
    ]);
    expect(f.capture.text()).not.toContain(token.slice(17));
    expect(f.capture.text()).not.toContain(stored?.digest);
  });

  it('revokes one token, and every token of a deleted identity', async () => {
    const f = await app();
    await f.call('PUT', `${BASE}/edge`, {}, f.manager);
    const a = (await f.call('POST', `${BASE}/edge/tokens`, undefined, f.manager)).json.tokenId as string;
    const b = (await f.call('POST', `${BASE}/edge/tokens`, undefined, f.manager)).json.tokenId as string;
    expect((await f.call('DELETE', `${BASE}/edge/tokens/${a}`, undefined, f.manager)).json).toEqual({ identity: 'edge', tokenId: a });
    expect((await f.call('DELETE', `${BASE}/edge/tokens/${a}`, undefined, f.manager)).status).toBe(404);
    expect((await f.call('DELETE', `${BASE}/other/tokens/${b}`, undefined, f.manager)).status).toBe(404);
    expect(await getToken(f.table, b)).toBeDefined();
    expect((await f.call('DELETE', `${BASE}/edge`, undefined, f.manager)).status).toBe(200);
    expect(await getToken(f.table, b)).toBeUndefined();
    expect((await f.call('GET', `${BASE}/edge/tokens`, undefined, f.manager)).status).toBe(404);
    expect((await f.call('POST', `${BASE}/edge/tokens`, undefined, f.manager)).status).toBe(404);
  });

  it('answers every route with what its schema in views.ts says, with and without the optional fields', async () => {
    const f = await app();
    conforms(identityViewSchema, await f.call('PUT', `${BASE}/edge`, { zones: ['edge-*'], unzoned: true }, f.manager), 'PUT (created)');
    conforms(identityViewSchema, await f.call('PUT', `${BASE}/edge`, { agentIds: ['a-*'] }, f.manager), 'PUT (changed)');
    conforms(identityViewSchema, await f.call('GET', `${BASE}/edge`, undefined, f.manager), 'GET one');
    conforms(identityListSchema, await f.call('GET', BASE, undefined, f.manager), 'GET list');
    const lasting = await f.call('POST', `${BASE}/edge/tokens`, undefined, f.manager);
    conforms(issuedTokenSchema, lasting, 'POST token without expiry');
    conforms(issuedTokenSchema, await f.call('POST', `${BASE}/edge/tokens`, { expiresInSeconds: 60 }, f.manager), 'POST token with expiry');
    f.clock.advance(60_000);
    const tokens = await f.call('GET', `${BASE}/edge/tokens`, undefined, f.manager);
    conforms(tokenListSchema, tokens, 'GET tokens');
    expect((tokens.json.items as { expired: boolean }[]).map((t) => t.expired).sort()).toEqual([false, true]);
    conforms(revokedTokenSchema, await f.call('DELETE', `${BASE}/edge/tokens/${lasting.json.tokenId as string}`, undefined, f.manager), 'DELETE token');
    conforms(identityViewSchema, await f.call('DELETE', `${BASE}/edge`, undefined, f.manager), 'DELETE identity');
  });

  it('answers 403 on every route to a caller without the account-manager role, before reading or writing', async () => {
    const f = await app();
    await f.call('PUT', `${BASE}/edge`, {}, f.manager);
    const routes: [string, string, unknown?][] = [
      ['GET', BASE],
      ['GET', `${BASE}/edge`],
      ['PUT', `${BASE}/edge`, { zones: ['*'], unzoned: true, agentIds: ['*'], staticAccounts: ['*'] }],
      ['PUT', `${BASE}/mine`, {}],
      ['DELETE', `${BASE}/edge`],
      ['POST', `${BASE}/edge/tokens`],
      ['GET', `${BASE}/edge/tokens`],
      ['DELETE', `${BASE}/edge/tokens/AAAAAAAAAAAA`],
    ];
    for (const [method, path, body] of routes) {
      const res = await f.call(method, path, body, f.reader);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.json.code).toBe('forbidden');
    }
    expect((await listIdentities(f.table)).map((i) => [i.name, i.zones])).toEqual([['edge', []]]);
    expect(await listTokens(f.table)).toEqual([]);
  });
});
