import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { isVendorError } from '../../shared/errors.ts';
import { silentLogger } from '../../shared/log.ts';
import { makePki, type Pki } from '../../test/support/pki.ts';
import { get } from '../../test/support/http.ts';
import { parseConfig } from '../config/load.ts';
import type { ServerConfig } from '../config/schema.ts';
import { createSecretResolver } from '../secrets/index.ts';
import { Readiness, startHealthServer } from './health.ts';
import type { RunningHttpServer } from './http-server.ts';

function serverConfig(server: Record<string, unknown>): ServerConfig {
  const result = parseConfig(stringify({ server: { host: '127.0.0.1', port: 0, ...server } }), 't.yml');
  expect(result.problems).toEqual([]);
  return result.config!.server;
}

// No secret engine is configured here: plain settings pass through, references fail with a reason.
const secrets = createSecretResolver(undefined, { logger: silentLogger(), env: {} });
afterAll(() => secrets.close());

let running: RunningHttpServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.close()));
  running = [];
});

async function start(server: Record<string, unknown>, readiness = new Readiness()): Promise<RunningHttpServer> {
  const s = await startHealthServer(serverConfig(server), readiness, secrets);
  running.push(s);
  return s;
}

describe('health server', () => {
  it('serves /cache as JSON when the agent gives its cache state, and 404 without', async () => {
    const withCache = await startHealthServer(serverConfig({}), new Readiness(), secrets, () => ({ tasksStopped: false, accounts: [{ account: 'prod', scopes: [{ scope: 'Pod', state: 'waiting-for-budget' }] }] }));
    running.push(withCache);
    const res = await get(`${withCache.url}/cache`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ tasksStopped: false, accounts: [{ account: 'prod', scopes: [{ scope: 'Pod', state: 'waiting-for-budget' }] }] });
    const without = await start({});
    expect((await get(`${without.url}/cache`)).status).toBe(404);
  });

  it('serves liveness, and readiness from the plugged-in probes', async () => {
    let connected = false;
    const readiness = new Readiness();
    readiness.set('config', () => ({ ok: true }));
    readiness.set('driver', () => (connected ? { ok: true } : { ok: false, detail: 'not connected to driver:9091' }));
    const s = await start({}, readiness);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect(await get(`${s.url}/livez`)).toMatchObject({ status: 200, text: 'ok\n' });
    const notReady = await get(`${s.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.text)).toEqual({
      ready: false,
      checks: { config: { ok: true }, driver: { ok: false, detail: 'not connected to driver:9091' } },
    });

    connected = true;
    expect((await get(`${s.url}/readyz`)).status).toBe(200);
    expect(JSON.parse((await get(`${s.url}/health`)).text)).toMatchObject({ live: true, ready: true });
  });

  it('is not ready without any probe, nor when a probe throws', async () => {
    const readiness = new Readiness();
    const s = await start({}, readiness);
    expect((await get(`${s.url}/readyz`)).status).toBe(503);
    readiness.set('driver', () => {
      throw new Error('boom');
    });
    const answer = await get(`${s.url}/readyz`);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.text).checks.driver).toEqual({ ok: false, detail: 'probe failed: boom' });
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    const s = await start({});
    expect((await get(`${s.url}/metrics`)).status).toBe(404);
    const post = await get(`${s.url}/livez`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });

  it('refuses to start on a port in use', async () => {
    const s = await start({});
    await expect(startHealthServer(serverConfig({ port: s.port }), new Readiness(), secrets)).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('health server over TLS (server.ssl.*)', () => {
  let pki: Pki;
  beforeAll(() => {
    pki = makePki();
  });

  it('serves HTTPS with the configured certificate and key', async () => {
    const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKey } });
    expect(s.url).toMatch(/^https:/);
    expect(await get(`${s.url}/livez`, { ca: readFileSync(pki.caCert) })).toMatchObject({ status: 200 });
    await expect(get(`${s.url}/livez`, { ca: readFileSync(pki.strangerCaCert) })).rejects.toThrow();
  });

  it('opens an encrypted key with keyFilePassword or keyPassword', async () => {
    for (const key of ['keyFilePassword', 'keyPassword']) {
      const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, [key]: pki.serverKeyPassword } });
      expect((await get(`${s.url}/livez`, { ca: readFileSync(pki.caCert) })).status).toBe(200);
    }
  });

  it('a wrong key password stops the start with an error that names the key and hides the password', async () => {
    const config = serverConfig({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, keyFilePassword: 'wrong-pass-123' } });
    const error: unknown = await startHealthServer(config, new Readiness(), secrets).catch((e: unknown) => e);
    expect(isVendorError(error) && error.code).toBe('invalid_input');
    expect(String((error as Error).message)).toMatch(/^server\.ssl: /);
    expect(JSON.stringify(error) + String(error)).not.toContain('wrong-pass-123');
  });

  it('a missing file names its key', async () => {
    const config = serverConfig({ ssl: { enabled: true, certFile: '/nonexistent/cert.pem', keyFile: pki.serverKey } });
    await expect(startHealthServer(config, new Readiness(), secrets)).rejects.toThrow(/^server\.ssl\.certFile: cannot read \/nonexistent\/cert\.pem: ENOENT/);
  });

  it('a secret reference that cannot be resolved stops the start with an error that names its key', async () => {
    const reference = 'encrypted:vault!e:secret!p:agent/tls!k:passphrase';
    const config = serverConfig({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, keyPassword: reference } });
    const error: unknown = await startHealthServer(config, new Readiness(), secrets).catch((e: unknown) => e);
    expect(isVendorError(error) && error.code).toBe('invalid_input');
    expect(isVendorError(error) && error.message).toBe(
      `server.ssl.keyPassword: cannot resolve secret ${reference}: secrets.vault.enabled is not true in vendor-agent.yml, so vault references cannot be resolved`,
    );
    const fileReference = 'encryptedFile:vault!e:secret!p:agent/tls!k:cert';
    const certConfig = serverConfig({ ssl: { enabled: true, certFile: fileReference, keyFile: pki.serverKey } });
    await expect(startHealthServer(certConfig, new Readiness(), secrets)).rejects.toThrow(`server.ssl.certFile: cannot resolve secret ${fileReference}: `);
  });

  it('clientAuth need: a client certificate signed by caCertFile is required', async () => {
    const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKey, caCertFile: pki.clientCaCert, clientAuth: 'need' } });
    const ca = readFileSync(pki.caCert);
    await expect(get(`${s.url}/livez`, { ca })).rejects.toThrow();
    const withCert = await get(`${s.url}/livez`, { ca, cert: readFileSync(pki.clientCert), key: readFileSync(pki.clientKey) });
    expect(withCert.status).toBe(200);
  });

  it('clientAuth want: a client without a certificate is served too', async () => {
    const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKey, caCertFile: pki.clientCaCert, clientAuth: 'want' } });
    expect((await get(`${s.url}/livez`, { ca: readFileSync(pki.caCert) })).status).toBe(200);
  });
});
