/**
 * Agent credentials under attack, through real sockets: the management API over HTTP issues and
 * revokes tokens, a driver on a real gRPC port judges them, and a hand-driven agent presents what an
 * attacker would. Driver and API share one manual clock, so expiry and the re-check of open streams
 * happen when the test moves time, not after a wait.
 */
import { readFileSync } from 'node:fs';
import { credentials, status, type StatusObject } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../functions/app.ts';
import { createApiAuth } from '../../functions/auth/authenticator.ts';
import { startApiServer, type RunningServer } from '../../functions/node.ts';
import { parseDriverGrpcConfig } from '../../driver/config.ts';
import { startDriver, type Driver } from '../../driver/server.ts';
import { ManualClock } from '../support/manual-clock.ts';
import { tokenDigest } from '../../shared/agents/tokens.ts';
import { listTokens } from '../../shared/table/agents/identities.ts';
import type { TableRef } from '../../shared/table/core/client.ts';
import { allSessions } from '../../shared/table/agents/sessions.ts';
import { captureLogger } from '../capture-log.ts';
import { clientCertificate, makePki, type Pki } from '../support/pki.ts';
import { RawAgent, helloMessage } from '../raw-agent.ts';
import { TestIssuer, oidcConfig } from '../support/oidc.ts';
import { secretScanner, type SecretScanner } from '../support/secret-scanner.ts';
import { TestTables } from '../support/table.ts';

const tables = new TestTables();
let issuer: TestIssuer;
let kid: string;
let pki: Pki;
beforeAll(async () => {
  await tables.start();
  issuer = await TestIssuer.start();
  kid = await issuer.addKey('ES256');
  pki = makePki();
});
afterAll(async () => {
  await issuer.close();
  await tables.close();
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const RECHECK_MS = 2_000;
const FILE_TOKEN = 'file-identity-token-0123456789';

interface World {
  table: TableRef;
  clock: ManualClock;
  api: RunningServer;
  driver: Driver;
  logs: ReturnType<typeof captureLogger>;
  /** Every agent token of the test: none may reach a log line. */
  secrets: SecretScanner;
  manager: string;
  reader: string;
  http(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; text: string }>;
  connect(options: { token?: string; cert?: { cert: string; key: string }; agentId?: string }): RawAgent;
}

async function world(driverConfig: Record<string, unknown> = {}): Promise<World> {
  const table = await tables.fresh();
  const clock = new ManualClock(Date.now());
  const logs = captureLogger();
  const secrets = secretScanner({ fileToken: FILE_TOKEN });
  // Runs last, once the driver and the API have closed: what they logged holds no token in any encoding.
  cleanups.push(() => secrets.assertClean(logs.text(), 'the driver and API logs'));
  issuer.now = () => Math.floor(clock.now() / 1000);
  const auth = createApiAuth({ oidc: oidcConfig(issuer), accountManagerRoles: ['vendor-admins'] }, { production: false, clock, logger: logs.log });
  const api = await startApiServer(createApp({ table, clock, auth, logger: logs.log }));
  cleanups.push(() => api.close());
  const config = parseDriverGrpcConfig({
    ...driverConfig,
    grpc: { host: '127.0.0.1', port: 0, ...(driverConfig['grpc'] as object) },
    // Leases far longer than any step of the test, so moving the clock ends streams only through their credentials.
    sessions: { heartbeatIntervalMs: 600_000, leaseMs: 3_600_000 },
    auth: { recheckIntervalMs: RECHECK_MS, identities: [{ name: 'from-file', zones: ['z'], agentIds: ['*'], tokens: [FILE_TOKEN] }], ...(driverConfig['auth'] as object) },
  });
  const driver = await startDriver({ config, table, log: logs.log, clock, modules: [] });
  cleanups.push(() => driver.close(50));
  const tls = config.grpc.tls !== undefined;
  return {
    table,
    clock,
    api,
    driver,
    logs,
    secrets,
    manager: await issuer.token({ sub: 'admin', groups: ['vendor-admins'] }, { kid }),
    reader: await issuer.token({ sub: 'dev', groups: ['dev'] }, { kid }),
    async http(method, path, token, body) {
      const res = await fetch(`${api.url}${path}`, { method, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await res.text();
      return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), text };
    },
    connect({ token, cert, agentId = 'agent-1' }) {
      const creds = !tls
        ? credentials.createInsecure()
        : credentials.createSsl(readFileSync(pki.caCert), cert === undefined ? null : readFileSync(cert.key), cert === undefined ? null : readFileSync(cert.cert));
      const agent = RawAgent.messages({ port: driver.port, ...(token === undefined ? {} : { token }), credentials: creds });
      cleanups.push(() => agent.close());
      agent.send(helloMessage(agentId, { zone: 'z' }));
      return agent;
    },
  };
}

async function welcomed(agent: RawAgent): Promise<void> {
  expect((await agent.next()).body).toBe('welcome');
}

async function refusedWith(agent: RawAgent, code: status, details?: string | RegExp): Promise<StatusObject> {
  const s = await agent.status;
  expect(s.code).toBe(code);
  if (details !== undefined) expect(s.details).toMatch(details);
  return s;
}

async function issue(w: World, name: string, allowances: Record<string, unknown> = { zones: ['z'], agentIds: ['*'] }, expiresInSeconds?: number) {
  expect((await w.http('PUT', `/vendor/agent-identities/${name}`, w.manager, allowances)).status).toBeLessThan(300);
  const res = await w.http('POST', `/vendor/agent-identities/${name}/tokens`, w.manager, expiresInSeconds === undefined ? undefined : { expiresInSeconds });
  expect(res.status).toBe(201);
  const token = res.json.token as string;
  w.secrets.add({ [`token of ${name}`]: token, [`secret of a token of ${name}`]: token.slice(17) });
  return { token, tokenId: res.json.tokenId as string };
}

describe('agent tokens, attacked', () => {
  it('refuses unknown tokens, of the issued form or not, and records nothing', async () => {
    const w = await world();
    const { tokenId } = await issue(w, 'edge');
    const forged = [
      `vat_${tokenId}_${'A'.repeat(43)}`, // a real token id with a guessed secret
      `vat_AAAAAAAAAAAA_${'B'.repeat(43)}`, // an id that was never issued
      'some-long-guessed-fleet-token',
    ];
    for (const token of forged) await refusedWith(w.connect({ token }), status.UNAUTHENTICATED, /^bearer token not accepted$/);
    await refusedWith(w.connect({}), status.UNAUTHENTICATED, 'missing bearer token');
    expect(await allSessions(w.table)).toEqual([]);
    expect(w.logs.text()).not.toContain('A'.repeat(43));
  });

  it('ends the open stream of a revoked token within one re-check, naming the identity and never the token, and refuses it after', async () => {
    const w = await world();
    const { token, tokenId } = await issue(w, 'edge');
    const kept = await issue(w, 'edge');
    const agent = w.connect({ token });
    await welcomed(agent);
    const other = w.connect({ token: kept.token, agentId: 'agent-2' });
    await welcomed(other);
    expect((await w.http('DELETE', `/vendor/agent-identities/edge/tokens/${tokenId}`, w.manager)).status).toBe(200);
    await w.clock.advance(RECHECK_MS);
    await refusedWith(agent, status.UNAUTHENTICATED, 'the agent token was revoked');
    const line = w.logs.lines.find((l) => String(l.msg).includes('agent stream of identity edge ended'));
    expect(line).toMatchObject({ identity: 'edge', tokenId });
    expect(w.logs.text()).not.toContain(token);
    expect(w.logs.text()).not.toContain(token.slice(17));
    // The other token of the identity (rotation) keeps its stream.
    expect(w.driver.sessions().map((s) => s.agentId)).toEqual(['agent-2']);
    await refusedWith(w.connect({ token }), status.UNAUTHENTICATED, /^bearer token not accepted$/);
  });

  it('ends every stream of a deleted identity, and a new identity of the same name does not revive its tokens', async () => {
    const w = await world();
    const { token } = await issue(w, 'edge');
    const agent = w.connect({ token });
    await welcomed(agent);
    expect((await w.http('DELETE', '/vendor/agent-identities/edge', w.manager)).status).toBe(200);
    await w.clock.advance(RECHECK_MS);
    await refusedWith(agent, status.UNAUTHENTICATED);
    await issue(w, 'edge');
    await refusedWith(w.connect({ token }), status.UNAUTHENTICATED, /^bearer token not accepted$/);
  });

  it('refuses an expired token, and ends its open stream when it expires', async () => {
    const w = await world();
    const { token } = await issue(w, 'edge', undefined, 60);
    const agent = w.connect({ token });
    await welcomed(agent);
    await w.clock.advance(30_000);
    expect(w.driver.sessions()).toHaveLength(1);
    await w.clock.advance(30_000);
    await refusedWith(agent, status.UNAUTHENTICATED, 'the agent token has expired');
    await refusedWith(w.connect({ token }), status.UNAUTHENTICATED, /^bearer token not accepted$/);
  });

  it('never shows a token again: what the listing gives does not authenticate', async () => {
    const w = await world();
    const { token, tokenId } = await issue(w, 'edge');
    const listed = await w.http('GET', '/vendor/agent-identities/edge/tokens', w.manager);
    expect(listed.status).toBe(200);
    expect(listed.text).toContain(tokenId);
    expect(listed.text).not.toContain(token.slice(17));
    expect(listed.text).not.toContain(tokenDigest(token));
    const [stored] = await listTokens(w.table, 'edge');
    // Even the stored digest, presented as if it were the secret, is refused.
    await refusedWith(w.connect({ token: `vat_${tokenId}_${stored?.digest.slice(0, 43)}` }), status.UNAUTHENTICATED);
    await refusedWith(w.connect({ token: tokenId }), status.UNAUTHENTICATED);
  });

  it('lets no caller without the account-manager role issue, list, change or revoke credentials', async () => {
    const w = await world();
    const { tokenId } = await issue(w, 'edge');
    for (const [method, path, body] of [
      ['POST', '/vendor/agent-identities/edge/tokens', undefined],
      ['GET', '/vendor/agent-identities/edge/tokens', undefined],
      ['PUT', '/vendor/agent-identities/edge', { zones: ['*'], unzoned: true, agentIds: ['*'], staticAccounts: ['*'] }],
      ['DELETE', `/vendor/agent-identities/edge/tokens/${tokenId}`, undefined],
      ['DELETE', '/vendor/agent-identities/edge', undefined],
    ] as const) {
      const res = await w.http(method, path, w.reader, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.text).not.toContain('vat_');
    }
    expect((await listTokens(w.table, 'edge')).map((t) => t.tokenId)).toEqual([tokenId]);
  });

  it('caps the streams of one identity and of the replica with RESOURCE_EXHAUSTED, and logs each refusal', async () => {
    const w = await world({ auth: { maxStreamsPerIdentity: 2 }, grpc: { maxStreams: 3 } });
    const { token } = await issue(w, 'edge');
    await welcomed(w.connect({ token, agentId: 'a1' }));
    await welcomed(w.connect({ token, agentId: 'a2' }));
    await refusedWith(w.connect({ token, agentId: 'a3' }), status.RESOURCE_EXHAUSTED, /auth\.maxStreamsPerIdentity 2/);
    expect(w.logs.lines.some((l) => l.identity === 'edge' && String(l.msg).includes('maxStreamsPerIdentity'))).toBe(true);
    await welcomed(w.connect({ token: FILE_TOKEN, agentId: 'f1' }));
    await refusedWith(w.connect({ token: FILE_TOKEN, agentId: 'f2' }), status.RESOURCE_EXHAUSTED, /grpc\.maxStreams 3/);
    expect(w.driver.sessions()).toHaveLength(3);
  });

  it('accepts a token of a file identity as that identity', async () => {
    const w = await world();
    await welcomed(w.connect({ token: FILE_TOKEN }));
    expect(w.driver.sessions()[0]?.identity.name).toBe('from-file');
  });
});

describe('client certificates, attacked', () => {
  const mtls = () => ({ grpc: { tls: { certFile: pki.serverCert, keyFile: pki.serverKey, clientCaFile: pki.clientCaCert } } });

  it('takes the identity from the URI SAN, from the table or the file', async () => {
    const w = await world(mtls());
    await issue(w, 'edge');
    await welcomed(w.connect({ cert: clientCertificate(pki, 'edge-agent', 'URI:urn:vendor-agent:identity:edge') }));
    await welcomed(w.connect({ cert: clientCertificate(pki, 'file-agent', 'URI:urn:vendor-agent:identity:from-file'), agentId: 'agent-2' }));
    expect(w.driver.sessions().map((s) => s.identity.name).sort()).toEqual(['edge', 'from-file']);
  });

  it('refuses a certificate naming an unknown identity, or none, and records nothing', async () => {
    const w = await world(mtls());
    await refusedWith(w.connect({ cert: clientCertificate(pki, 'ghost-agent', 'URI:urn:vendor-agent:identity:ghost') }), status.UNAUTHENTICATED, 'the client certificate names an unknown agent identity');
    await refusedWith(w.connect({ cert: clientCertificate(pki, 'two-names', 'URI:urn:vendor-agent:identity:edge,URI:urn:vendor-agent:identity:from-file') }), status.UNAUTHENTICATED, /more than one/);
    // The CN alone names nothing unless auth.certificateCommonName says so.
    await refusedWith(w.connect({ cert: clientCertificate(pki, 'from-file', undefined) }), status.UNAUTHENTICATED, /names no agent identity/);
    expect(await allSessions(w.table)).toEqual([]);
  });

  it('refuses a certificate naming a known identity but signed by another CA, during the handshake', async () => {
    const w = await world(mtls());
    const s = await w.connect({ cert: clientCertificate(pki, 'stranger-edge', 'URI:urn:vendor-agent:identity:from-file', 'stranger-ca') }).status;
    expect(s.code).toBe(status.UNAVAILABLE);
    expect(await allSessions(w.table)).toEqual([]);
  });

  it('takes the CN when auth.certificateCommonName says so', async () => {
    const w = await world({ ...mtls(), auth: { certificateCommonName: true } });
    await welcomed(w.connect({ cert: clientCertificate(pki, 'from-file', undefined) }));
  });

  it('ends the streams of a certificate whose identity is deleted from the table', async () => {
    const w = await world(mtls());
    await issue(w, 'edge');
    const agent = w.connect({ cert: clientCertificate(pki, 'edge-agent-2', 'URI:urn:vendor-agent:identity:edge') });
    await welcomed(agent);
    expect((await w.http('DELETE', '/vendor/agent-identities/edge', w.manager)).status).toBe(200);
    await w.clock.advance(RECHECK_MS);
    await refusedWith(agent, status.UNAUTHENTICATED, 'the agent identity was deleted');
  });
});

describe('changed allowances', () => {
  it('end the open streams of the identity, which reconnect under the new ones', async () => {
    const w = await world();
    const { token } = await issue(w, 'edge');
    const agent = w.connect({ token });
    await welcomed(agent);
    expect((await w.http('PUT', '/vendor/agent-identities/edge', w.manager, { zones: ['z', 'other'], agentIds: ['*'] })).status).toBe(200);
    await w.clock.advance(RECHECK_MS);
    await refusedWith(agent, status.UNAVAILABLE, /allowances changed/);
    const again = w.connect({ token });
    await welcomed(again);
    await vi.waitFor(() => expect(w.driver.sessions()[0]?.identity.zones).toEqual(['z', 'other']));
  });
});
