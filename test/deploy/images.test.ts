/**
 * The container images, checked without a Docker engine: what each Dockerfile builds from, runs,
 * copies and exposes, measured against the code (entry files, the files they load, the packages
 * those import, default ports), and each HEALTHCHECK command run as written against the real
 * server it probes.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../agent/config/load.ts';
import { Readiness, startHealthServer } from '../../agent/observability/health.ts';
import { createSecretResolver } from '../../agent/secrets/resolver.ts';
import { parseDriverGrpcConfig } from '../../driver/config.ts';
import { DRIVER_MODULES } from '../../driver/modules.ts';
import { startDriver } from '../../driver/server.ts';
import { silentLogger } from '../../shared/log.ts';
import { startEmbeddedTable, type EmbeddedTable } from '../../shared/table/core/embedded.ts';
import { packagesImported, reachableFiles } from './code-links.ts';
import { dockerfile, dockerignore, type Dockerfile } from './dockerfile.ts';
import { DEFAULT_DRIVER_METRICS_PORT } from '../../shared/driver-config/metrics.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

const agentDefaults = parseConfig('', 'defaults.yml').config!;
const driverDefaults = parseDriverGrpcConfig({ auth: { tokens: ['t'.repeat(32)] } });

const IMAGES = [
  {
    name: 'agent',
    path: 'deploy/docker/agent.Dockerfile',
    /** What the image may hold from the repository: the agent ships alone. */
    contents: ['package.json', 'shared', 'agent'],
    ports: [agentDefaults.server.port, agentDefaults.prometheus.port],
  },
  {
    name: 'driver',
    path: 'deploy/docker/driver.Dockerfile',
    contents: ['package.json', 'shared', 'driver', 'deploy/driver/vendor-driver.aws.yml'],
    // The metrics port is the one deploy/driver/vendor-driver.aws.yml, baked into the image, enables.
    ports: [driverDefaults.grpc.port, DEFAULT_DRIVER_METRICS_PORT],
  },
] as const;

function run(file: string, args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((done) => {
    execFile(file, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 20_000 }, (error) => {
      done(error === null ? 0 : typeof error.code === 'number' ? error.code : -1);
    });
  });
}

/** Runs the image's HEALTHCHECK command with this machine's Node 24, from the repository root. */
function healthcheck(image: Dockerfile, env: Record<string, string>): Promise<number> {
  const [program, ...args] = image.healthcheck();
  if (program !== 'node') throw new Error(`HEALTHCHECK runs ${program}, expected node`);
  return run(process.execPath, args, env);
}

for (const spec of IMAGES) {
  describe(`${spec.path}`, () => {
    const image = dockerfile(resolve(ROOT, spec.path));
    const ignored = dockerignore(readFileSync(resolve(ROOT, `${spec.path}.dockerignore`), 'utf8'));
    const admitted = (path: string) => ignored(path);

    it('builds on Node 24 slim, installing production dependencies only', () => {
      for (const stage of image.stages) expect(stage.image, 'every stage').toMatch(/^node:24(\.\d+)*-slim(@sha256:[0-9a-f]{64})?$/);
      const installs = image.stages.flatMap((s) => s.instructions).filter((i) => i.keyword === 'RUN' && /\bnpm\b/.test(i.args));
      expect(installs.length).toBeGreaterThan(0);
      for (const i of installs) expect(i.args).toMatch(/npm ci --omit=dev\b/);
      expect(image.final.instructions.some((i) => i.keyword === 'COPY' && /--from=\S+ \/app\/node_modules/.test(i.args))).toBe(true);
    });

    it('runs node on its TypeScript entry file as a user that is not root', () => {
      const user = image.user();
      expect(user).toBeDefined();
      expect(['root', '0'].includes(user!.split(':')[0]!)).toBe(false);
      const entry = image.entryFile();
      expect(existsSync(resolve(ROOT, entry)), `${entry}, the image's entry file`).toBe(true);
      expect(image.env().NODE_ENV).toBe('production');
    });

    it(`copies only ${spec.contents.join(', ')} from the repository, all admitted by its .dockerignore`, () => {
      const sources = image.copiedFromContext().flatMap((c) => c.sources);
      expect(sources.filter((s) => s !== 'package-lock.json').sort()).toEqual([...spec.contents].sort());
      for (const source of sources) {
        expect(existsSync(resolve(ROOT, source)), source).toBe(true);
        expect(admitted(source), `${source} is ignored by the build context`).toBe(true);
      }
      expect(admitted('agent/main.test.ts') || admitted('shared/links.test.ts'), 'tests stay out of the context').toBe(false);
      expect(admitted('.data/vendor.db') || admitted('node_modules/yaml/package.json') || admitted('vendor-driver.yml')).toBe(false);
    });

    it('holds every file its entry loads, and every package those import is a production dependency', () => {
      const files = reachableFiles(ROOT, image.entryFile());
      const roots = spec.contents.filter((c) => c !== 'package.json');
      for (const file of files) {
        expect(roots.some((r) => file === r || file.startsWith(`${r}/`)), `${file} is loaded but not in the image`).toBe(true);
        expect(admitted(file), `${file} is loaded but left out by the .dockerignore`).toBe(true);
      }
      for (const [name, importers] of packagesImported(ROOT, files)) {
        expect(pkg.dependencies[name], `${name} (imported by ${importers.join(', ')}) is not a production dependency`).toBeDefined();
      }
    });

    it('declares no build argument that would take linked secrets into the image', () => {
      const declared = [...image.args.keys(), ...image.stages.flatMap((s) => s.instructions.filter((i) => i.keyword === 'ARG').map((i) => i.args.split('=')[0]!))];
      expect(declared.filter((name) => name.startsWith('SST_'))).toEqual([]);
      expect(declared).toEqual(['NODE_IMAGE']);
    });

    it(`exposes the ports the code listens on by default (${spec.ports.join(', ')})`, () => {
      expect(image.exposed().sort()).toEqual([...spec.ports].sort());
    });
  });
}

describe('agent image HEALTHCHECK', () => {
  const image = dockerfile(resolve(ROOT, 'deploy/docker/agent.Dockerfile'));
  const secrets = createSecretResolver(undefined, { logger: silentLogger(), env: {} });
  afterAll(() => secrets.close());

  it('probes the health server where the agent serves it by default', () => {
    const url = new URL(image.env().VENDOR_HEALTHCHECK_URL!);
    expect(Number(url.port)).toBe(agentDefaults.server.port);
    expect(url.pathname).toBe('/livez');
  });

  it('passes against a running agent health server and fails once it is gone', async () => {
    const server = await startHealthServer({ ...agentDefaults.server, host: '127.0.0.1', port: 0 }, new Readiness(), secrets);
    const url = `${server.url}/livez`;
    expect(await healthcheck(image, { VENDOR_HEALTHCHECK_URL: url })).toBe(0);
    await server.close();
    expect(await healthcheck(image, { VENDOR_HEALTHCHECK_URL: url })).not.toBe(0);
  });
});

describe('driver image HEALTHCHECK', () => {
  const image = dockerfile(resolve(ROOT, 'deploy/docker/driver.Dockerfile'));
  let driver: Awaited<ReturnType<typeof startDriver>>;
  let table: EmbeddedTable;
  beforeAll(async () => {
    table = await startEmbeddedTable();
    driver = await startDriver({
      config: parseDriverGrpcConfig({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['t'.repeat(32)] } }),
      table,
      modules: DRIVER_MODULES,
      log: silentLogger(),
    });
  });
  afterAll(async () => {
    await driver?.close(100);
    await table?.close();
  });

  it('probes the gRPC port the driver listens on by default', () => {
    expect(image.env().VENDOR_HEALTHCHECK_TARGET).toBe(`127.0.0.1:${driverDefaults.grpc.port}`);
  });

  it('passes while the driver serves and fails when its health service says NOT_SERVING', async () => {
    const target = `127.0.0.1:${driver.port}`;
    expect(await healthcheck(image, { VENDOR_HEALTHCHECK_TARGET: target })).toBe(0);
    driver.health.setStatus('', 'NOT_SERVING');
    expect(await healthcheck(image, { VENDOR_HEALTHCHECK_TARGET: target })).not.toBe(0);
  });

  it('fails when nothing listens', async () => {
    expect(await healthcheck(image, { VENDOR_HEALTHCHECK_TARGET: '127.0.0.1:1' })).not.toBe(0);
  });
});
