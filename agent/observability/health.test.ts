import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { isVendorError } from '../../shared/errors.ts';
import { makeTestPki, type TestPki } from '../../test/support/pki.ts';
import { get } from '../../test/support/http.ts';
import { parseConfig } from '../config/load.ts';
import type { ServerConfig } from '../config/schema.ts';
import { Readiness, startHealthServer } from './health.ts';
import type { RunningServer } from './http-server.ts';

function serverConfig(server: Record<string, unknown>): ServerConfig {
  const result = parseConfig(stringify({ server: { host: '127.0.0.1', port: 0, ...server } }), 't.yml');
  expect(result.problems).toEqual([]);
  return result.config!.server;
}

let running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.close()));
  running = [];
});

async function start(server: Record<string, unknown>, readiness = new Readiness()): Promise<RunningServer> {
  const s = await startHealthServer(serverConfig(server), readiness);
  running.push(s);
  return s;
}

describe('health server', () => {
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
    await expect(startHealthServer(serverConfig({ port: s.port }), new Readiness())).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('health server over TLS (server.ssl.*)', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = makeTestPki();
  });

  it('serves HTTPS with the configured certificate and key', async () => {
    const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKey } });
    expect(s.url).toMatch(/^https:/);
    expect(await get(`${s.url}/livez`, { ca: pki.read(pki.caCert) })).toMatchObject({ status: 200 });
    await expect(get(`${s.url}/livez`, { ca: pki.read(pki.otherCaCert) })).rejects.toThrow();
  });

  it('opens an encrypted key with keyFilePassword or keyPassword', async () => {
    for (const key of ['keyFilePassword', 'keyPassword']) {
      const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, [key]: pki.passphrase } });
      expect((await get(`${s.url}/livez`, { ca: pki.read(pki.caCert) })).status).toBe(200);
    }
  });

  it('a wrong key password stops the start with an error that names the key and hides the password', async () => {
    const config = serverConfig({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, keyFilePassword: 'wrong-pass-123' } });
    const error: unknown = await startHealthServer(config, new Readiness()).catch((e: unknown) => e);
    expect(isVendorError(error) && error.code).toBe('invalid_input');
    expect(String((error as Error).message)).toMatch(/^server\.ssl: /);
    expect(JSON.stringify(error) + String(error)).not.toContain('wrong-pass-123');
  });

  it('a missing file names its key', async () => {
    const config = serverConfig({ ssl: { enabled: true, certFile: '/nonexistent/cert.pem', keyFile: pki.serverKey } });
    await expect(startHealthServer(config, new Readiness())).rejects.toThrow(/^server\.ssl\.certFile: cannot read \/nonexistent\/cert\.pem: ENOENT/);
  });

  it('clientAuth need: a client certificate signed by caCertFile is required', async () => {
    const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKey, caCertFile: pki.caCert, clientAuth: 'need' } });
    const ca = pki.read(pki.caCert);
    await expect(get(`${s.url}/livez`, { ca })).rejects.toThrow();
    const withCert = await get(`${s.url}/livez`, { ca, cert: pki.read(pki.clientCert), key: pki.read(pki.clientKey) });
    expect(withCert.status).toBe(200);
  });

  it('clientAuth want: a client without a certificate is served too', async () => {
    const s = await start({ ssl: { enabled: true, certFile: pki.serverCert, keyFile: pki.serverKey, caCertFile: pki.caCert, clientAuth: 'want' } });
    expect((await get(`${s.url}/livez`, { ca: pki.read(pki.caCert) })).status).toBe(200);
  });
});
