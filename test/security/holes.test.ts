/**
 * Attacks on the local control plane (`npm start`) and the servers it runs, each through the real
 * process or a real socket: the admin token used from another machine, the data folder read by
 * another user, the embedded table reached by another local process.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../functions/app.ts';
import { createApiAuth } from '../../functions/auth/authenticator.ts';
import { startApiServer } from '../../functions/node.ts';
import { EXAMPLE_ADMIN_TOKEN } from '../../scripts/control-plane.ts';
import { captureLogger } from '../capture-log.ts';
import { PLANE_TOKEN, runPlaneToExit, startPlane, stopAll, stopPlane } from '../support/control-plane-process.ts';
import { useTestTables } from '../support/table.ts';
import { listeningTcpPorts, unixSocketsOf } from '../support/sockets.ts';
import { createDocumentClient } from '../../shared/table/core/client.ts';

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
  const tables = useTestTables();

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

/** Every path under `dir` (itself included) with its permission bits. */
function modes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  const pending = [dir];
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const stat = lstatSync(path);
    out.set(path, stat.mode & 0o777);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) pending.push(join(path, entry));
  }
  return out;
}

/** Paths of `dir` whose mode lets anyone but this user in: what another local user could read. */
function openToOthers(dir: string): string[] {
  return [...modes(dir)].filter(([, mode]) => (mode & 0o077) !== 0).map(([path, mode]) => `${path} ${mode.toString(8)}`);
}

describe('the data folder', () => {
  it('is made 0700 with its files 0600, and an existing folder left open by an earlier start is closed', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'holes-'));
    writeFileSync(join(cwd, 'vendor-driver.yml'), `api:\n  auth:\n    adminToken: ${PLANE_TOKEN}\nkubernetes:\n  accounts:\n    - name: prod\n`);
    const data = join(cwd, '.data');
    const first = await startPlane(cwd);
    expect((await fetch(`${first.url}/vendor/accounts`, { headers: bearer(PLANE_TOKEN) })).status).toBe(200);
    expect(await stopPlane(first.child)).toBe(0);
    expect(openToOthers(data)).toEqual([]);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, 'agent-token')).mode & 0o777).toBe(0o600);
    expect([...modes(join(data, 'table')).keys()].length).toBeGreaterThan(3);
    // As an earlier version (or a umask of 022) left it: everything readable by every user.
    for (const [path] of modes(data)) chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    // A folder of the user's own in the data folder is not the control plane's to change.
    mkdirSync(join(data, 'mine'), { mode: 0o755 });
    chmodSync(join(data, 'mine'), 0o755);
    const second = await startPlane(cwd);
    // What the table writes while it runs is this user's alone too.
    expect((await fetch(`${second.url}/vendor/accounts`, { method: 'POST', headers: bearer(PLANE_TOKEN), body: JSON.stringify([{ name: 'prod', zoneId: 'agents_ns' }]) })).status).toBe(200);
    expect(openToOthers(data)).toEqual([`${join(data, 'mine')} 755`]);
    expect(await stopPlane(second.child)).toBe(0);
    expect(openToOthers(data)).toEqual([`${join(data, 'mine')} 755`]);
  });
});

describe('the embedded table', () => {
  it('answers no other local process, whatever credentials it sends: it is on a socket only this user may reach', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'holes-'));
    writeFileSync(join(cwd, 'vendor-driver.yml'), `api:\n  auth:\n    adminToken: ${PLANE_TOKEN}\nkubernetes:\n  accounts:\n    - name: prod\n`);
    const plane = await startPlane(cwd);
    const pid = plane.child.pid as number;
    // Every TCP port the control plane listens on, found as any local process finds them.
    const ports = listeningTcpPorts(pid);
    expect(ports).toContain(Number(new URL(plane.url).port));
    for (const port of ports) {
      const intruder = createDocumentClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'local',
        credentials: { accessKeyId: 'anyone', secretAccessKey: 'anything' },
        maxAttempts: 1,
        connectionTimeoutMs: 1_000,
        requestTimeoutMs: 2_000,
      });
      try {
        await expect(intruder.send(new ListTablesCommand({})), `port ${port}`).rejects.toBeDefined();
      } finally {
        intruder.destroy();
      }
    }
    // The table is on a unix socket, in a folder no other user may enter.
    const sockets = unixSocketsOf(pid).filter((p) => p.endsWith('table.sock'));
    expect(sockets).toHaveLength(1);
    const folder = statSync(dirname(sockets[0]!));
    expect([folder.mode & 0o777, folder.uid]).toEqual([0o700, process.getuid?.()]);
    // And the control plane itself works through it.
    expect((await fetch(`${plane.url}/vendor/accounts`, { headers: bearer(PLANE_TOKEN) })).status).toBe(200);
    expect(await stopPlane(plane.child)).toBe(0);
  });
});
