import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { findClusterBinaries, parseEnvFile } from './binaries.ts';

// The script's paths that need no download or build; the build itself runs in CI through .ci/run.
const script = join(import.meta.dirname, 'provision.sh');
const run = promisify(execFile);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vendor-provision-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function provision(env: Record<string, string>) {
  const { PATH, HOME } = process.env;
  return run('bash', [script], { env: { PATH, HOME, ...env } });
}

async function envFile(cache: string) {
  return parseEnvFile(await readFile(join(cache, 'env'), 'utf8'));
}

test('KUBEBUILDER_ASSETS with both binaries is recorded in <cache>/env, which the suite reads', async () => {
  const assets = join(dir, 'assets');
  await mkdir(assets);
  for (const name of ['kube-apiserver', 'etcd']) {
    await writeFile(join(assets, name), '#!/bin/sh\n');
    await chmod(join(assets, name), 0o755);
  }
  const cache = join(dir, 'cache');
  await provision({ KUBEBUILDER_ASSETS: assets, VENDOR_KUBE_CACHE: cache });
  expect(await envFile(cache)).toEqual({
    KUBE_APISERVER_BIN: join(assets, 'kube-apiserver'), ETCD_BIN: join(assets, 'etcd'), KUBE_SOURCE: 'KUBEBUILDER_ASSETS',
  });
  expect(findClusterBinaries({ VENDOR_KUBE_CACHE: cache })).toMatchObject({ available: true, kubeApiserver: join(assets, 'kube-apiserver') });
});

test('KUBEBUILDER_ASSETS without the binaries: exit 0, and the reason is recorded for the suite', async () => {
  const cache = join(dir, 'cache');
  const { stderr } = await provision({ KUBEBUILDER_ASSETS: join(dir, 'empty'), VENDOR_KUBE_CACHE: cache });
  expect(stderr).toContain('real-cluster suite unavailable');
  const recorded = await envFile(cache);
  expect(recorded.KUBE_UNAVAILABLE_REASON).toContain('does not hold executable kube-apiserver and etcd');
  expect(findClusterBinaries({ VENDOR_KUBE_CACHE: cache })).toEqual({ available: false, reason: recorded.KUBE_UNAVAILABLE_REASON });
});

test('a cache folder that cannot be created: exit 0 with the reason on stderr', async () => {
  await writeFile(join(dir, 'a-file'), '');
  const cache = join(dir, 'a-file', 'cache');
  const { stderr } = await provision({ KUBEBUILDER_ASSETS: join(dir, 'empty'), VENDOR_KUBE_CACHE: cache });
  expect(stderr).toContain(`cache folder ${cache} is not writable`);
});
