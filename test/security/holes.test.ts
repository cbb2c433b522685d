/**
 * Attacks on the local control plane (`npm start`) and the servers it runs, each through the real
 * process or a real socket: the admin token used from another machine, the data folder read by
 * another user, the embedded table reached by another local process.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../functions/app.ts';
import { createApiAuth } from '../../functions/auth/authenticator.ts';
import { startApiServer } from '../../functions/node.ts';
import { EXAMPLE_ADMIN_TOKEN } from '../../scripts/control-plane.ts';
import { captureLogger } from '../capture-log.ts';
import { PLANE_TOKEN, runPlaneToExit, startPlane, stopAll, stopPlane } from '../support/control-plane-process.ts';
import { TestTables } from '../support/table.ts';

afterEach(stopAll);

/** An address of this machine that is not loopback: requests to it come from it, as from another host. */
function outsideAddress(): string {
  const found = Object.values(networkInterfaces())
    .flat()
    .find((i) => i !== undefined && !i.internal && i.family === 'IPv4');
  if (found === undefined) throw new Error('this test needs a network interface other than loopback');
  return found.address;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the admin token off loopback', () => {
  const tables = new TestTables();
  beforeAll(() => tables.start());
  afterAll(() => tables.close());

  it('npm start refuses to serve any admin token on an address other than loopback, unless api.auth.adminTokenOffLoopback says so', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'holes-'));
    writeFileSync(join(cwd, 'own.yml'), `api:\n  auth:\n    adminToken: ${PLANE_TOKEN}\n`);
    writeFileSync(join(cwd, 'allowed.yml'), `api:\n  auth:\n    adminToken: ${PLANE_TOKEN}\n    adminTokenOffLoopback: true\n`);
    writeFileSync(join(cwd, 'example.yml'), `api:\n  auth:\n    adminToken: ${EXAMPLE_ADMIN_TOKEN}\n    adminTokenOffLoopback: true\n`);
    for (const host of ['0.0.0.0', outsideAddress()]) {
      const refused = await runPlaneToExit(cwd, { VENDOR_DRIVER_CONFIG: 'own.yml', VENDOR_API_HOST: host });
      expect(refused.code, host).toBe(1);
      expect(refused.output).toContain('api.auth.adminTokenOffLoopback: true');
      expect(refused.output).not.toContain(PLANE_TOKEN);
    }
    // The example's token is public: no setting lets it off loopback.
    const example = await runPlaneToExit(cwd, { VENDOR_DRIVER_CONFIG: 'example.yml', VENDOR_API_HOST: '0.0.0.0' });
    expect(example.code).toBe(1);
    expect(example.output).toContain('the admin token of the example config is known to everyone');
    // Allowed explicitly, it serves the token from another address, and says so at start.
    const plane = await startPlane(cwd, { VENDOR_DRIVER_CONFIG: 'allowed.yml', VENDOR_API_HOST: '0.0.0.0' });
    expect(plane.output()).toContain('from any address (api.auth.adminTokenOffLoopback');
    const port = new URL(plane.url).port;
    expect((await fetch(`http://${outsideAddress()}:${port}/vendor/accounts`, { headers: bearer(PLANE_TOKEN) })).status).toBe(200);
    expect(await stopPlane(plane.child)).toBe(0);
  });

  it('the API refuses the admin token from an address other than loopback, however it is served', async () => {
    const table = await tables.fresh();
    const serve = async (adminTokenOffLoopback: boolean | undefined) => {
      const capture = captureLogger();
      const auth = createApiAuth({ adminToken: PLANE_TOKEN, accountManagerRoles: [], ...(adminTokenOffLoopback === undefined ? {} : { adminTokenOffLoopback }) }, { production: false, logger: capture.log });
      return { server: await startApiServer(createApp({ table, auth }), { hostname: '0.0.0.0' }), capture };
    };
    const { server, capture } = await serve(undefined);
    try {
      expect((await fetch(`http://127.0.0.1:${server.port}/vendor/accounts`, { headers: bearer(PLANE_TOKEN) })).status).toBe(200);
      const outside = await fetch(`http://${outsideAddress()}:${server.port}/vendor/accounts`, { headers: bearer(PLANE_TOKEN) });
      expect(outside.status).toBe(401);
      expect(await outside.json()).toMatchObject({ code: 'unauthenticated', detail: 'a valid bearer token is required' });
      expect(capture.text()).toContain('the admin token from an address other than loopback');
      expect(capture.text()).not.toContain(PLANE_TOKEN);
    } finally {
      await server.close();
    }
    const allowed = await serve(true);
    try {
      expect((await fetch(`http://${outsideAddress()}:${allowed.server.port}/vendor/accounts`, { headers: bearer(PLANE_TOKEN) })).status).toBe(200);
    } finally {
      await allowed.server.close();
    }
  });
});
