import { rmSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../shared/clock.ts';
import { refusal } from '../test/refusal.ts';
import { Harness, TOKENS } from '../test/connection-harness.ts';
import { makePki } from '../test/pki.ts';
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
