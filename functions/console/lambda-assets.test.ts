import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOYED } from '../../infra/control-plane.ts';
import { buildConsole, CONSOLE_OUT } from '../../scripts/build-console.ts';
import { adminTokenAuth } from '../../test/support/api.ts';
import { SstRecorder, loadSstConfig } from '../../test/deploy/sst-recorder.ts';
import { createApp } from '../app.ts';
import { defaultConsoleDir } from './asset-store.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const recorder = new SstRecorder('vendor-agent', {
  VendorOidcIssuer: 'https://issuer.example.test',
  VendorOidcAudience: 'vendor-api',
  VendorAccountManagerRoles: 'vendor-admins',
  VendorWakeSecret: 'a-wake-secret-of-at-least-32-characters',
});
let uninstall: () => void = () => {};
beforeAll(() => {
  uninstall = recorder.install();
});
afterAll(() => uninstall());

describe('the console in the deployed Lambda', () => {
  it('is built by the deployment and copied into the API function where the handler reads it', async () => {
    await recorder.run(await loadSstConfig(resolve(ROOT, 'sst.config.ts')), 'dev', { VENDOR_DRIVER_DOMAIN: 'grpc.vendor.example.test' });
    const fn = recorder.single('sst.aws.Function');
    expect(fn.args.copyFiles).toEqual([{ from: relative(ROOT, CONSOLE_OUT), to: 'console' }]);
    expect(DEPLOYED.consoleFiles.to).toBe('console');
    expect(defaultConsoleDir({ LAMBDA_TASK_ROOT: '/var/task' })).toBe(join('/var/task', DEPLOYED.consoleFiles.to));
  }, 60_000);

  it('is served from the task root as the deployment lays it out', async () => {
    const taskRoot = mkdtempSync(join(tmpdir(), 'lambda-task-'));
    await buildConsole(join(taskRoot, DEPLOYED.consoleFiles.to));
    const app = createApp({ table: { client: null as never, tableName: 'unused' }, auth: adminTokenAuth(), console: { dir: defaultConsoleDir({ LAMBDA_TASK_ROOT: taskRoot }) } });
    const res = await app.request('/ui/');
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('/ui/assets/main-');
  });
});
