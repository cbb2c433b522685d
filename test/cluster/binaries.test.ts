import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { findClusterBinaries, parseEnvFile } from './binaries.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vendor-binaries-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function executable(name: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, '#!/bin/sh\n');
  await chmod(path, 0o755);
  return path;
}

describe('findClusterBinaries', () => {
  test('KUBEBUILDER_ASSETS with both binaries is used', async () => {
    const apiserver = await executable('kube-apiserver');
    const etcd = await executable('etcd');
    expect(findClusterBinaries({ KUBEBUILDER_ASSETS: dir, VENDOR_KUBE_CACHE: join(dir, 'none') })).toEqual({
      available: true, kubeApiserver: apiserver, etcd, source: `KUBEBUILDER_ASSETS=${dir}`,
    });
  });

  test('KUBEBUILDER_ASSETS without etcd says which binary is missing', async () => {
    await executable('kube-apiserver');
    const found = findClusterBinaries({ KUBEBUILDER_ASSETS: dir });
    expect(found).toEqual({ available: false, reason: expect.stringContaining(join(dir, 'etcd')) });
  });

  test('explicit KUBE_APISERVER_BIN and ETCD_BIN win over everything else', async () => {
    const apiserver = await executable('my-apiserver');
    const etcd = await executable('my-etcd');
    const found = findClusterBinaries({ KUBE_APISERVER_BIN: apiserver, ETCD_BIN: etcd, KUBEBUILDER_ASSETS: '/nowhere' });
    expect(found).toMatchObject({ available: true, kubeApiserver: apiserver, etcd });
  });

  test('the env file written by provision.sh names the binaries', async () => {
    const apiserver = await executable('kube-apiserver');
    const etcd = await executable('etcd');
    await writeFile(join(dir, 'env'), `KUBE_APISERVER_BIN=${apiserver}\nETCD_BIN=${etcd}\nKUBE_SOURCE=cache\n`);
    expect(findClusterBinaries({ VENDOR_KUBE_CACHE: dir })).toEqual({
      available: true, kubeApiserver: apiserver, etcd, source: `cache via ${join(dir, 'env')}`,
    });
  });

  test('the env file carries provision.sh\'s reason when it could not provide the binaries', async () => {
    await writeFile(join(dir, 'env'), 'KUBE_UNAVAILABLE_REASON=not a Debian system\n');
    expect(findClusterBinaries({ VENDOR_KUBE_CACHE: dir })).toEqual({ available: false, reason: 'not a Debian system' });
  });

  test('binaries named in the env file that are gone make the suite unavailable, not broken', async () => {
    await writeFile(join(dir, 'env'), `KUBE_APISERVER_BIN=${join(dir, 'gone')}\nETCD_BIN=${join(dir, 'gone-too')}\n`);
    expect(findClusterBinaries({ VENDOR_KUBE_CACHE: dir })).toEqual({ available: false, reason: expect.stringContaining('not executable') });
  });

  test('without provisioning the reason says to run provision.sh', () => {
    expect(findClusterBinaries({ VENDOR_KUBE_CACHE: join(dir, 'empty') })).toEqual({
      available: false, reason: expect.stringContaining('test/cluster/provision.sh has not been run'),
    });
  });
});

test('parseEnvFile keeps values verbatim and ignores comments and blank lines', () => {
  expect(parseEnvFile('# made by provision.sh\nA=1\n\nB=x=y z\n')).toEqual({ A: '1', B: 'x=y z' });
});
