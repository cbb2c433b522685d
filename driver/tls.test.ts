import { readFileSync, rmSync } from 'node:fs';
import { credentials, status, type ChannelCredentials } from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../test/support/manual-clock.ts';
import { RawAgent, helloMessage } from '../test/raw-agent.ts';
import { refusal } from '../test/refusal.ts';
import { allSessions } from '../shared/table/agents/sessions.ts';
import { Harness, TOKENS } from '../test/connection-harness.ts';
import { makePki } from '../test/support/pki.ts';
import { serverCredentials } from './tls.ts';

const pki = makePki();
afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));
const h = new Harness();
afterEach(() => h.cleanup());

describe('driver TLS credentials', () => {
  it('serves TLS with a password-protected key', async () => {
    const { driver } = await h.driver({
      grpc: { tls: { certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, keyFilePassword: pki.serverKeyPassword } },
    });
    const agent = h.agent(
      { driver: { grpc: `localhost:${driver.port}`, auth: { token: TOKENS[0] }, tls: { cacertFile: pki.caCert } } },
      { clock: new ManualClock() },
    );
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1));
  });

  it('names the key of a file it cannot read and of a password that does not fit, without the password', () => {
    const missing = refusal(() => serverCredentials({ certFile: '/no/such/cert.pem', keyFile: pki.serverKey }));
    expect(missing.message).toBe('grpc.tls.certFile: cannot read /no/such/cert.pem: ENOENT');
    const wrong = refusal(() =>
      serverCredentials({ certFile: pki.serverCert, keyFile: pki.serverKeyEncrypted, keyFilePassword: 'wrong-password' }),
    );
    expect(wrong.issues).toEqual([{ path: 'grpc.tls.keyFilePassword', message: 'does not decrypt grpc.tls.keyFile' }]);
    expect(wrong.message).not.toContain('wrong-password');
  });
});

describe('driver TLS refusals, seen from the driver', () => {
  const pem = (path: string) => readFileSync(path);
  /** A raw client's first answer: welcomed, or refused with the status it got. */
  async function outcome(port: number, creds: ChannelCredentials): Promise<string> {
    const a = RawAgent.messages({ port, host: 'localhost', token: TOKENS[0], credentials: creds });
    try {
      a.send(helloMessage('raw-agent'));
      const first = await Promise.race([a.next().then((m) => m.body ?? ''), a.status.then((s) => `${s.code}`)]);
      return first === 'welcome' ? 'welcome' : first;
    } catch {
      return `${(await a.status).code}`;
    } finally {
      a.close();
    }
  }
  const refused = `${status.UNAVAILABLE}`;

  it('with TLS: refuses plaintext and clients that trust another CA, before anything is recorded', async () => {
    const { driver, table, logs } = await h.driver({ grpc: { tls: { certFile: pki.serverCert, keyFile: pki.serverKey } } });
    expect(await outcome(driver.port, credentials.createInsecure())).toBe(refused);
    expect(await outcome(driver.port, credentials.createSsl(pem(pki.strangerCaCert)))).toBe(refused);
    expect(await outcome(driver.port, credentials.createSsl())).toBe(refused);
    expect(await allSessions(table)).toEqual([]);
    expect(logs.text()).not.toContain(TOKENS[0]);
    expect(await outcome(driver.port, credentials.createSsl(pem(pki.caCert)))).toBe('welcome');
  });

  it('with mTLS: refuses a client without a certificate and one signed by an unknown CA, before anything is recorded', async () => {
    const { driver, table } = await h.driver({ grpc: { tls: { certFile: pki.serverCert, keyFile: pki.serverKey, clientCaFile: pki.clientCaCert } } });
    expect(await outcome(driver.port, credentials.createSsl(pem(pki.caCert)))).toBe(refused);
    expect(await outcome(driver.port, credentials.createSsl(pem(pki.caCert), pem(pki.strangerClientKey), pem(pki.strangerClientCert)))).toBe(refused);
    // A certificate of the right CA for the server, offered as a client one, is not from the client CA either.
    expect(await outcome(driver.port, credentials.createSsl(pem(pki.caCert), pem(pki.serverKey), pem(pki.serverCert)))).toBe(refused);
    expect(await allSessions(table)).toEqual([]);
    expect(await outcome(driver.port, credentials.createSsl(pem(pki.caCert), pem(pki.clientKey), pem(pki.clientCert)))).toBe('welcome');
  });
});
