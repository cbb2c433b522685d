import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { allSessions } from '../../shared/table/agents/sessions.ts';
import { Harness, TOKENS, type TestAgent } from '../../test/connection-harness.ts';
import { makePki } from '../../test/support/pki.ts';
import { rmSync } from 'node:fs';
import type { DriverTlsSettings } from './settings.ts';

const pki = makePki();
afterAll(() => rmSync(pki.dir, { recursive: true, force: true }));
const h = new Harness();
afterEach(() => h.cleanup());

const tlsDriver = (mtls: boolean, named = false) =>
  h.driver({
    grpc: {
      tls: {
        certFile: named ? pki.namedServerCert : pki.serverCert,
        keyFile: named ? pki.namedServerKey : pki.serverKey,
        ...(mtls ? { clientCaFile: pki.clientCaCert } : {}),
      },
    },
  });

/** An agent dialling over TLS; its clock stands still, so it makes exactly one attempt. */
function tlsAgent(port: number, tls: DriverTlsSettings, host = 'localhost'): TestAgent {
  return h.agent({ driver: { grpc: `${host}:${port}`, auth: { token: TOKENS[0] }, tls } }, { clock: new ManualClock() });
}

async function outcome(agent: TestAgent): Promise<string> {
  // A real TLS handshake: on a loaded machine it takes longer than vi.waitFor's default second.
  await vi.waitFor(() => expect(agent.states.length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
  const first = agent.states[0];
  return first?.connected ? 'connected' : `refused: ${first?.end.error.message ?? ''}`;
}

describe('agent connection over TLS', () => {
  it('connects when the driver certificate verifies against driver.tls.cacertFile', async () => {
    const { driver } = await tlsDriver(false);
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.caCert }))).toBe('connected');
  });

  it('refuses a driver certificate the trust store does not know', async () => {
    const { driver } = await tlsDriver(false);
    expect(await outcome(tlsAgent(driver.port, {}))).toMatch(/^refused: .*unable to verify the first certificate/);
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.strangerCaCert }))).toMatch(/^refused: .*unable to verify the first certificate/);
  });

  it('connects to an unverifiable driver with insecureSkipVerify', async () => {
    const { driver } = await tlsDriver(false);
    expect(await outcome(tlsAgent(driver.port, { insecureSkipVerify: true }))).toBe('connected');
  });

  it('checks the certificate against serverName instead of the dialled host', async () => {
    const { driver } = await tlsDriver(false, true);
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.caCert }))).toMatch(/^refused: .*Host: localhost\. is not in the cert's altnames: DNS:driver\.internal/);
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.caCert, serverName: 'driver.internal' }))).toBe('connected');
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.caCert, serverName: 'other.internal' }))).toMatch(/^refused: .*Host: other\.internal\. is not in the cert's altnames/);
  });

  it('is refused by a plaintext agent', async () => {
    const { driver } = await tlsDriver(false);
    const agent = h.agent({ driver: { grpc: `localhost:${driver.port}`, insecure: true, auth: { token: TOKENS[0] } } }, { clock: new ManualClock() });
    expect(await outcome(agent)).toMatch(/^refused: /);
  });
});

describe('agent connection over mutual TLS', () => {
  it('connects with a client certificate and key in separate files', async () => {
    const { driver } = await tlsDriver(true);
    const tls = { cacertFile: pki.caCert, clientCertFile: pki.clientCert, clientKeyFile: pki.clientKey };
    expect(await outcome(tlsAgent(driver.port, tls))).toBe('connected');
  });

  it('connects with an encrypted key and its password, and with the key inside the certificate file', async () => {
    const { driver } = await tlsDriver(true);
    const encrypted = {
      cacertFile: pki.caCert,
      clientCertFile: pki.clientCert,
      clientKeyFile: pki.clientKeyEncrypted,
      clientKeyFilePassword: pki.clientKeyPassword,
    };
    expect(await outcome(tlsAgent(driver.port, encrypted))).toBe('connected');
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.caCert, clientCertFile: pki.clientCertAndKey }))).toBe('connected');
  });

  it('reports a wrong key password without the password', async () => {
    const { driver } = await tlsDriver(true);
    const agent = tlsAgent(driver.port, {
      cacertFile: pki.caCert,
      clientCertFile: pki.clientCert,
      clientKeyFile: pki.clientKeyEncrypted,
      clientKeyFilePassword: 'not-the-password',
    });
    expect(await outcome(agent)).toBe('refused: driver.tls.clientKeyFilePassword does not decrypt the client key');
    expect(agent.logs.text()).toContain('driver.tls.clientKeyFilePassword does not decrypt the client key');
    expect(agent.logs.text()).not.toContain('not-the-password');
    expect(driver.sessions()).toEqual([]);
  });

  it('is refused without a client certificate, or with one from another CA', async () => {
    const { driver, table } = await tlsDriver(true);
    expect(await outcome(tlsAgent(driver.port, { cacertFile: pki.caCert }))).toMatch(/^refused: .*certificate required/);
    const stranger = { cacertFile: pki.caCert, clientCertFile: pki.strangerClientCert, clientKeyFile: pki.strangerClientKey };
    expect(await outcome(tlsAgent(driver.port, stranger))).toMatch(/^refused: /);
    expect(await allSessions(table)).toEqual([]);
  });
});
