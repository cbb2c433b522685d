import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import type { ApiAuthConfig } from '../../shared/driver-config/api.ts';
import { captureLogger } from '../../test/capture-log.ts';
import { TEST_ADMIN_TOKEN, apiFixture } from '../../test/support/api.ts';
import { TestIssuer, oidcConfig, unsecuredToken } from '../../test/support/oidc.ts';
import { TestTables } from '../../test/support/table.ts';
import { createApiAuth } from './authenticator.ts';
import * as v from 'valibot';
import { oidcSchema } from '../../shared/driver-config/api.ts';

const oidcSchemaDefaults = () => v.parse(oidcSchema, { issuer: 'https://idp.example.com', audience: 'a' });

const tables = new TestTables();
let issuer: TestIssuer;
beforeAll(async () => {
  await tables.start();
  issuer = await TestIssuer.start();
});
afterAll(async () => {
  await issuer.close();
  await tables.close();
});

const START = 1_700_000_000_000;

/** An app whose callers are verified against the loopback issuer, on a manual clock. */
async function oidcApp(oidc: Partial<NonNullable<ApiAuthConfig['oidc']>> = {}, extra: Partial<ApiAuthConfig> = {}) {
  const clock = new ManualClock(START);
  const capture = captureLogger();
  const auth = createApiAuth(
    {
      oidc: oidcConfig(issuer, oidc),
      accountManagerRoles: ['vendor-admins'],
      ...extra,
    },
    { production: false, clock, logger: capture.log },
  );
  const f = await apiFixture(tables, [{ name: 'prod' }], { auth, logger: capture.log });
  issuer.now = () => Math.floor(clock.now() / 1000);
  return { ...f, clock, capture };
}

const GET = (f: Awaited<ReturnType<typeof oidcApp>>, token: string | null) => f.call('GET', '/vendor/accounts', undefined, token);

/** Every refusal looks the same to the caller, whatever was wrong. */
function expectRefused(res: { status: number; type: string; headers: Headers; json: Record<string, unknown> }, tokenSent = true) {
  expect(res.status).toBe(401);
  expect(res.type).toBe('application/problem+json');
  expect(res.json).toEqual({
    type: 'urn:vendor-agent:problem:unauthenticated',
    title: 'Authentication required',
    status: 401,
    detail: 'a valid bearer token is required',
    code: 'unauthenticated',
    errors: [],
    instance: '/vendor/accounts',
  });
  expect(res.headers.get('www-authenticate')).toBe(tokenSent ? 'Bearer realm="vendor-agent", error="invalid_token"' : 'Bearer realm="vendor-agent"');
}

describe('bearer JWTs from an OIDC issuer', () => {
  it('accepts a valid token found through discovery, and caches the keys', async () => {
    const kid = await issuer.addKey('ES256');
    const f = await oidcApp();
    issuer.requests.length = 0;
    const token = await issuer.token({ sub: 'alice', groups: ['dev'] }, { kid });
    expect((await GET(f, token)).status).toBe(200);
    expect((await GET(f, token)).status).toBe(200);
    expect(issuer.requests).toEqual(['/.well-known/openid-configuration', '/jwks']);
  });

  it('accepts RS256 and EdDSA keys too, and a list of audiences', async () => {
    const rs = await issuer.addKey('RS256');
    const ed = await issuer.addKey('EdDSA');
    const f = await oidcApp({ audience: ['other', 'vendor-api'] });
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: rs }))).status).toBe(200);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: ed }))).status).toBe(200);
  });

  it('verifies a token without kid against each key of its type', async () => {
    const a = await issuer.addKey('ES256');
    const b = await issuer.addKey('ES256');
    const f = await oidcApp();
    for (const kid of [a, b]) expect((await GET(f, await issuer.token({ sub: 'a' }, { kid, header: { kid: undefined } }))).status).toBe(200);
    const stranger = await issuer.addKey('ES256', { publish: false });
    expectRefused(await GET(f, await issuer.token({ sub: 'a' }, { kid: stranger, header: { kid: undefined } })));
  });

  it('refuses each bad credential with the same 401, and logs why without the token', async () => {
    const kid = await issuer.addKey('ES256');
    const unpublished = await issuer.addKey('ES256', { publish: false });
    const rsa = await issuer.addKey('RS256');
    const f = await oidcApp();
    const now = Math.floor(START / 1000);
    const good = await issuer.token({ sub: 'alice' }, { kid });
    const [h, p] = good.split('.');
    const otherSigned = await issuer.token({ sub: 'alice' }, { kid: unpublished, header: { kid } }); // signed by another key, claims to be `kid`
    const cases: Record<string, string> = {
      'bad signature': `${h}.${p}.${otherSigned.split('.')[2]}`,
      'tampered payload': `${h}.${Buffer.from(JSON.stringify({ sub: 'mallory', iss: issuer.url, aud: 'vendor-api', exp: now + 300 })).toString('base64url')}.${good.split('.')[2]}`,
      'wrong issuer': await issuer.token({ sub: 'a' }, { kid, iss: 'https://evil.example.com' }),
      'wrong audience': await issuer.token({ sub: 'a' }, { kid, aud: 'another-api' }),
      expired: await issuer.token({ sub: 'a' }, { kid, iat: now - 3600, ttl: 3600 - 61 }),
      'not yet valid': await issuer.token({ sub: 'a' }, { kid, nbf: now + 61 }),
      'no expiry': await issuer.token({ sub: 'a' }, { kid, ttl: null }),
      'unknown kid': await issuer.token({ sub: 'a' }, { kid: unpublished }),
      'alg none': unsecuredToken({ sub: 'a', iss: issuer.url, aud: 'vendor-api', exp: now + 300 }, { kid }),
      'HS256 with the public key as secret': await new SignJWT({ sub: 'a', iss: issuer.url, aud: 'vendor-api', exp: now + 300 })
        .setProtectedHeader({ alg: 'HS256', kid: rsa })
        .sign(new TextEncoder().encode(await issuer.publicPem(rsa))),
      malformed: 'not-a-jwt',
      'two parts': `${h}.${p}`,
      'the admin token, which is not configured': TEST_ADMIN_TOKEN,
    };
    for (const [why, token] of Object.entries(cases)) {
      const res = await GET(f, token);
      expect(res.status, why).toBe(401);
      expectRefused(res);
    }
    expectRefused(await GET(f, null), false);
    for (const header of ['Basic YWxpY2U6c2VjcmV0', 'Bearer', 'Bearer ', `Bearer ${good} extra`, `Token ${good}`, `Bearer ${'a'.repeat(20_000)}`]) {
      const res = await f.app.request('/vendor/accounts', { headers: { authorization: header } });
      expect(res.status, header.slice(0, 30)).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="vendor-agent", error="invalid_token"');
    }
    const log = f.capture.text();
    for (const token of Object.values(cases)) expect(log).not.toContain(token);
    const reasons = f.capture.lines.filter((l) => l.msg === 'API caller refused').map((l) => l.reason);
    expect(reasons).toEqual(expect.arrayContaining(['ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JWT_EXPIRED', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'ERR_JWKS_NO_MATCHING_KEY', 'not a bearer token']));
    // Within the clock skew, the same limits pass.
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid, iat: now - 3600, ttl: 3600 - 59 }))).status).toBe(200);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid, nbf: now + 59 }))).status).toBe(200);
  });

  it('refuses a token issued to live longer than maxTokenLifetimeSeconds, or without iat, however far from its expiry', async () => {
    const kid = await issuer.addKey('ES256');
    const f = await oidcApp({ maxTokenLifetimeSeconds: 3_600 });
    const now = Math.floor(START / 1000);
    // A year-long token, as a leaked service token might be: signed, unexpired, and still refused.
    const yearLong = await issuer.token({ sub: 'a' }, { kid, ttl: 365 * 86_400 });
    expectRefused(await GET(f, yearLong));
    expectRefused(await GET(f, await issuer.token({ sub: 'a' }, { kid, ttl: 3_601 })));
    // An old iat does not shorten the check: what counts is the lifetime it was issued with.
    expectRefused(await GET(f, await issuer.token({ sub: 'a' }, { kid, iat: now - 7_200, ttl: 7_500 })));
    // Without iat the lifetime is unknown: refused while the limit is on.
    expectRefused(await GET(f, await issuer.token({ sub: 'a', iat: undefined }, { kid })));
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid, ttl: 3_600 }))).status).toBe(200);
    const reasons = f.capture.lines.filter((l) => l.msg === 'API caller refused').map((l) => [l.reason, l.claim]);
    expect(reasons).toContainEqual(['ERR_JWT_CLAIM_VALIDATION_FAILED', 'iat']);
    expect(f.capture.text()).not.toContain(yearLong);
    // The default is a day; 0 turns the limit off.
    expect(oidcSchemaDefaults().maxTokenLifetimeSeconds).toBe(86_400);
    expectRefused(await GET(await oidcApp(), await issuer.token({ sub: 'a' }, { kid, ttl: 86_401 })));
    const off = await oidcApp({ maxTokenLifetimeSeconds: 0 });
    expect((await GET(off, yearLong)).status).toBe(200);
    expect((await GET(off, await issuer.token({ sub: 'a', iat: undefined }, { kid }))).status).toBe(200);
  });

  it('serves health and the OpenAPI document without credentials, and 401 for unknown routes', async () => {
    const f = await oidcApp();
    expect((await f.call('GET', '/healthz', undefined, null)).status).toBe(200);
    expect((await f.call('GET', '/openapi.json', undefined, null)).status).toBe(200);
    expect((await f.call('GET', '/nope', undefined, null)).status).toBe(401);
    expect((await f.call('POST', '/vendor/accounts', '[', null)).status).toBe(401);
  });

  it('picks up a rotated key by its new kid, at most once per cooldown, and drops a withdrawn key', async () => {
    const old = await issuer.addKey('ES256');
    const f = await oidcApp({ jwksCooldownSeconds: 30 });
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: old }))).status).toBe(200);

    // The issuer rotates: a new key is published beside the old one.
    const next = await issuer.addKey('ES256', { publish: false });
    issuer.publish([old, next]);
    issuer.requests.length = 0;
    // Within the cooldown of the first fetch, an unknown kid does not refetch (an attacker's random kid
    // must not make the API hammer the issuer).
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: next }))).status).toBe(401);
    expect(issuer.requests).toEqual([]);
    await f.clock.advance(30_000);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: next }))).status).toBe(200);
    expect(issuer.requests).toEqual(['/.well-known/openid-configuration', '/jwks']);
    // Random kids right after: no fetch.
    for (let i = 0; i < 5; i++) expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: old, header: { kid: `random-${i}` } }))).status).toBe(401);
    expect(issuer.requests).toHaveLength(2);

    // The old key is withdrawn; once the keys are refreshed (maximum age), its tokens stop working.
    issuer.publish([next]);
    const oldToken = await issuer.token({ sub: 'a' }, { kid: old });
    expect((await GET(f, oldToken)).status).toBe(200); // still cached
    await f.clock.advance(600_000);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: old }))).status).toBe(401);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid: next }))).status).toBe(200);
  });

  it('takes a verified token as verified for a minute at most, and never past its expiry', async () => {
    const kid = await issuer.addKey('ES256');
    const f = await oidcApp({ jwksCooldownSeconds: 0 });
    const token = await issuer.token({ sub: 'a' }, { kid, ttl: 100 });
    expect((await GET(f, token)).status).toBe(200);
    // The key is withdrawn and the keys fetched again (a token with an unknown kid asks for them).
    issuer.publish([await issuer.addKey('ES256', { publish: false })]);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid, header: { kid: 'unknown' } }))).status).toBe(401);
    await f.clock.advance(59_000);
    expect((await GET(f, token)).status).toBe(200); // verified less than a minute ago
    await f.clock.advance(1_000);
    expect((await GET(f, token)).status).toBe(401); // checked again: its key is gone

    const kid2 = await issuer.addKey('ES256');
    const short = await issuer.token({ sub: 'a' }, { kid: kid2, ttl: 1 });
    expect((await GET(f, short)).status).toBe(200);
    await f.clock.advance(60_999); // exp + 60 s of skew, less 1 ms
    expect((await GET(f, short)).status).toBe(200);
    await f.clock.advance(1);
    expect((await GET(f, short)).status).toBe(401);
  });

  it('keeps the keys it has while the issuer is down, and answers 503 when it never had any', async () => {
    const kid = await issuer.addKey('ES256');
    const f = await oidcApp({ jwksCooldownSeconds: 0 });
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid }))).status).toBe(200);
    issuer.failWith = 500;
    try {
      await f.clock.advance(700_000);
      expect((await GET(f, await issuer.token({ sub: 'a' }, { kid }))).status).toBe(200);
      expect(f.capture.lines.some((l) => l.msg === 'cannot fetch the issuer signing keys' && l.keptOldKeys === true)).toBe(true);

      const fresh = await oidcApp({ jwksCooldownSeconds: 30 });
      const res = await GET(fresh, await issuer.token({ sub: 'a' }, { kid }));
      expect(res.status).toBe(503);
      expect(res.json.code).toBe('unavailable');
      expect(res.headers.get('retry-after')).toBe('5');
      // Within the cooldown it does not ask again.
      const asked = issuer.requests.length;
      expect((await GET(fresh, await issuer.token({ sub: 'a' }, { kid }))).status).toBe(503);
      expect(issuer.requests.length).toBe(asked);
    } finally {
      issuer.failWith = undefined;
    }
  });

  it('takes a jwks_uri with a query, but never one over plain http elsewhere than loopback', async () => {
    const kid = await issuer.addKey('ES256');
    try {
      issuer.jwksUri = `${issuer.url}/jwks?appid=vendor`;
      expect((await GET(await oidcApp(), await issuer.token({ sub: 'a' }, { kid }))).status).toBe(200);
      issuer.jwksUri = 'http://keys.example.com/jwks';
      const f = await oidcApp();
      expect((await GET(f, await issuer.token({ sub: 'a' }, { kid }))).status).toBe(503);
      expect(f.capture.text()).toContain('jwks_uri that is not https');
    } finally {
      issuer.jwksUri = undefined;
    }
  });

  it('refuses a discovery document that names another issuer', async () => {
    const kid = await issuer.addKey('ES256');
    const f = await oidcApp({ issuer: issuer.url.replace('127.0.0.1', 'localhost') });
    const res = await GET(f, await issuer.token({ sub: 'a' }, { kid, iss: issuer.url.replace('127.0.0.1', 'localhost') }));
    expect(res.status).toBe(503);
    expect(f.capture.text()).toContain('the discovery document names issuer');
  });
});

describe('the static admin token', () => {
  it('may do everything; a near miss is a 401', async () => {
    const f = await apiFixture(tables, [{ name: 'prod', permissions: [{ READ: ['ops'] }] }]);
    expect((await f.call('GET', '/vendor/accounts/prod')).status).toBe(200);
    expect((await f.call('POST', '/vendor/accounts', [{ name: 'prod' }])).status).toBe(200);
    expectRefused(await f.call('GET', '/vendor/accounts', undefined, `${TEST_ADMIN_TOKEN}x`));
    expectRefused(await f.call('GET', '/vendor/accounts', undefined, TEST_ADMIN_TOKEN.slice(0, -1)));
    expectRefused(await f.call('GET', '/vendor/accounts', undefined, TEST_ADMIN_TOKEN.toUpperCase()));
  });

  it('works beside OIDC', async () => {
    const kid = await issuer.addKey('ES256');
    const f = await oidcApp({}, { adminToken: TEST_ADMIN_TOKEN });
    expect((await GET(f, TEST_ADMIN_TOKEN)).status).toBe(200);
    expect((await GET(f, await issuer.token({ sub: 'a' }, { kid }))).status).toBe(200);
  });

  it('is refused at start in production mode, and authentication is never off', () => {
    expect(() => createApiAuth({ adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: true })).toThrow(
      /api\.auth\.adminToken: the admin token is for local use only and is refused in production mode/,
    );
    const oidc = { issuer: 'https://idp.example.com', audience: ['a'], rolesClaim: 'groups', clockSkewSeconds: 60, jwksMaxAgeSeconds: 600, jwksCooldownSeconds: 30, maxTokenLifetimeSeconds: 86_400 };
    expect(() => createApiAuth({ adminToken: TEST_ADMIN_TOKEN, oidc, accountManagerRoles: [] }, { production: true })).toThrow(/refused in production mode/);
    expect(() => createApiAuth({ accountManagerRoles: [] }, { production: true })).toThrow(/api\.auth\.oidc: production mode needs an OIDC issuer/);
    expect(() => createApiAuth({ accountManagerRoles: [] }, { production: false })).toThrow(/api\.auth: the API does not run without authentication/);
    expect(() => createApiAuth({ oidc, accountManagerRoles: [] }, { production: true })).not.toThrow();
    try {
      createApiAuth({ adminToken: TEST_ADMIN_TOKEN, accountManagerRoles: [] }, { production: true });
    } catch (err) {
      expect(JSON.stringify(err)).not.toContain(TEST_ADMIN_TOKEN);
      expect((err as Error).message).not.toContain(TEST_ADMIN_TOKEN);
    }
  });
});
