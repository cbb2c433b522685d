/**
 * The driver as the AWS stack deploys it, under attack with a fleet-wide token: `sst.config.ts` is
 * evaluated with the recording stand-in for SST, and the real driver process (`driver/main.ts`, the
 * entry of its image) is started with exactly what the stack and the image give the service — the
 * image's environment, the service's `environment`, its links as `SST_RESOURCE_*` — on an embedded
 * table, with `deploy/driver/vendor-driver.aws.yml`. Agents of that driver authenticate with tokens
 * issued per identity (docs/deploy.md, "Agent credentials: issue, rotate, revoke"); a fleet-wide
 * token is refused however it is offered.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { status as grpcStatus } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { issueIdentityToken, putIdentityView } from '../../functions/agent-identities/service.ts';
import { systemClock } from '../../shared/clock.ts';
import { silentLogger } from '../../shared/log.ts';
import { PROTOCOL_VERSION } from '../../shared/protocol/messages.ts';
import { ensureTable, startEmbeddedTable, type EmbeddedTable } from '../../shared/table/core/embedded.ts';
import { dockerfile } from '../deploy/dockerfile.ts';
import { SstRecorder, loadSstConfig, resolved } from '../deploy/sst-recorder.ts';
import { RawAgent } from '../raw-agent.ts';
import { startChild, type Child } from '../support/process.ts';
import { tableProcessEnv } from '../support/table-env.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DEPLOYED_FILE = resolve(ROOT, 'deploy/driver/vendor-driver.aws.yml');
const FLEET_TOKEN = 'fleet-token-for-every-agent-0123456789';
const ZONE = 'vendor-agent_vendor';

let table: EmbeddedTable & { endpoint: string };
let dir: string;
/** Per stage: the environment the driver's task gets from the stack and its image. */
const deployedEnv = new Map<string, Record<string, string>>();
const children: Child[] = [];

beforeAll(async () => {
  const recorder = new SstRecorder('vendor-agent', {
    VendorOidcIssuer: 'https://issuer.example.test',
    VendorOidcAudience: 'vendor-api',
    VendorAccountManagerRoles: 'vendor-admins',
    VendorWakeSecret: 'a-wake-secret-of-at-least-32-characters',
  });
  const uninstall = recorder.install();
  try {
    const config = await loadSstConfig(resolve(ROOT, 'sst.config.ts'));
    for (const stage of ['dev', 'production']) {
      await recorder.run(config, stage, { VENDOR_DRIVER_DOMAIN: 'grpc.vendor.example.test' });
      const service = recorder.single('sst.aws.Service');
      const image = dockerfile(resolve(ROOT, (service.args.image as { dockerfile: string }).dockerfile));
      // A container gets each linked component's properties as SST_RESOURCE_<name> (JSON).
      const links = Object.fromEntries(
        recorder.linkedNames(service).map((name) => {
          const c = recorder.named(name);
          const properties = c.type === 'sst.Secret' ? { type: c.type, value: recorder.secrets[name] ?? c.args.placeholder } : { type: c.type, name: `vendor-agent-${stage}-${name}` };
          return [`SST_RESOURCE_${name}`, JSON.stringify(properties)];
        }),
      );
      deployedEnv.set(stage, { ...image.env(), ...(resolved(service.args.environment ?? {}) as Record<string, string>), ...links });
    }
  } finally {
    uninstall();
  }
  // One embedded DynamoDB holding each stage's table, under the name its link gives.
  const tableOf = (stage: string) => (JSON.parse(deployedEnv.get(stage)?.SST_RESOURCE_VendorTable ?? '{}') as { name: string }).name;
  table = await startEmbeddedTable({ tableName: tableOf('production'), tcp: true });
  await ensureTable(table.client, tableOf('dev'));
  dir = mkdtempSync(join(tmpdir(), 'deployed-driver-'));
});

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await c.exited;
  }
});

afterAll(async () => {
  await table?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** The deployed file, with `change` applied, written where the started driver reads it. */
function deployedFile(name: string, change: (file: Record<string, unknown>) => void = () => undefined): string {
  const file = parse(readFileSync(DEPLOYED_FILE, 'utf8')) as Record<string, unknown>;
  change(file);
  const path = join(dir, `${name}.yml`);
  writeFileSync(path, stringify(file));
  return path;
}

/**
 * `driver/main.ts` with the deployed environment of `stage`; only the file's path, the table's
 * endpoint (with the credentials AWS would supply), a free port and JSON logs differ.
 */
function deployedDriver(stage: string, configPath: string, extra: Record<string, string> = {}): Child {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VENDOR_') && !k.startsWith('SST_')));
  const child = startChild(process.execPath, ['driver/main.ts'], {
    cwd: ROOT,
    env: {
      ...inherited,
      ...deployedEnv.get(stage),
      VENDOR_DRIVER_CONFIG: configPath,
      ...tableProcessEnv({ endpoint: table.endpoint }),
      VENDOR_LOG_FORMAT: 'json',
      GRPC_PORT: '0',
      METRICS_PORT: '0',
      ...extra,
    },
  });
  children.push(child);
  return child;
}

async function listening(child: Child): Promise<number> {
  const line = await Promise.race([
    child.line((l) => l.includes('"msg":"driver listening"')),
    child.exited.then((code) => {
      throw new Error(`the driver exited with ${code}: ${child.stdout.join('\n')}`);
    }),
  ]);
  return (JSON.parse(line) as { port: number }).port;
}

function hello(port: number, token: string): RawAgent {
  const agent = RawAgent.messages({ port, token });
  agent.send({ hello: { protocolVersion: PROTOCOL_VERSION, agentId: 'agent-1', zone: ZONE, agentVersion: '0.1.0' } });
  return agent;
}

describe('the deployed driver', () => {
  for (const stage of ['dev', 'production']) {
    it(`on stage ${stage}, does not start with a fleet-wide token in its file, and says why without the token`, async () => {
      const child = deployedDriver(stage, deployedFile(`fleet-${stage}`, (f) => (f.auth = { tokens: [FLEET_TOKEN] })));
      const outcome = await Promise.race([child.exited.then((code) => `exited with ${code}`), child.line((l) => l.includes('"msg":"driver listening"')).then(() => 'listening')]);
      expect(outcome).toBe('exited with 1');
      const out = child.stdout.join('\n');
      expect(out).toContain('the driver did not start: the driver does not start in production mode: auth.tokens: fleet-wide agent tokens (auth.tokens) are refused in production mode');
      expect(out + child.stderr.join('\n')).not.toContain(FLEET_TOKEN);
    });
  }

  it('takes a token issued for the cluster\'s identity, and refuses a fleet token left in its environment by an older stack', async () => {
    const deps = { table, clock: systemClock, logger: silentLogger() };
    await putIdentityView(deps, 'prod-eu', { zones: [ZONE], unzoned: false, agentIds: ['*'], staticAccounts: [] });
    const { token } = await issueIdentityToken(deps, 'prod-eu', {});
    const stale = { SST_RESOURCE_VendorAgentTokens: JSON.stringify({ type: 'sst.sst.Secret', value: FLEET_TOKEN }) };
    const child = deployedDriver('production', deployedFile('as-deployed'), stale);
    const port = await listening(child);
    expect(child.stdout.some((l) => l.includes('"production":true'))).toBe(true);

    const fleet = hello(port, FLEET_TOKEN);
    expect((await fleet.status).code).toBe(grpcStatus.UNAUTHENTICATED);
    fleet.close();
    const cluster = hello(port, token);
    expect((await cluster.next()).body).toBe('welcome');
    cluster.close();
    const logs = [...child.stdout, ...child.stderr].join('\n');
    expect(logs).not.toContain(FLEET_TOKEN);
    expect(logs).not.toContain(token);
  });
});
