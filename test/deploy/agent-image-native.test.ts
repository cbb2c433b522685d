/**
 * The agent image and the native addon of its profiler (@datadog/pprof): the package ships the addon
 * prebuilt, per platform and Node ABI, and loads it at run time, so the image needs no compiler, only
 * that the prebuild for its Node and C library be in the package and that the system libraries the
 * addon links against be in the base image (those Node itself needs).
 */
import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packagesImported, reachableFiles } from './code-links.ts';
import { dockerfile } from './dockerfile.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGE = join(ROOT, 'node_modules/@datadog/pprof');
const image = dockerfile(resolve(ROOT, 'deploy/docker/agent.Dockerfile'));

/** Node's ABI (NODE_MODULE_VERSION) per major version, for the images' Node. */
const NODE_ABI: Record<string, string> = { '24': '137' };

/** Libraries of Debian's glibc that Node itself links against, and so every node:*-slim image has. */
const IN_BASE_IMAGE = new Set(['libc.so.6', 'libm.so.6', 'libpthread.so.0', 'libdl.so.2', 'libstdc++.so.6', 'libgcc_s.so.1', 'ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1']);

describe('deploy/docker/agent.Dockerfile and the profiler addon', () => {
  const base = image.final.image;
  const major = /^node:(\d+)/.exec(base)?.[1];

  it("is needed: the agent's code imports @datadog/pprof", () => {
    expect([...packagesImported(ROOT, reachableFiles(ROOT, image.entryFile())).keys()]).toContain('@datadog/pprof');
  });

  it('builds on a glibc image whose Node has a known ABI', () => {
    expect(base).toMatch(/^node:\d+(\.\d+)*-slim/);
    expect(base).not.toMatch(/alpine/);
    expect(NODE_ABI[major!], `Node ${major}`).toBeDefined();
  });

  it('installs with no build step: the package has no install script and loads a prebuilt addon', () => {
    const scripts = (JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    expect(Object.keys(scripts).filter((s) => ['preinstall', 'install', 'postinstall'].includes(s))).toEqual([]);
  });

  for (const arch of ['x64', 'arm64']) {
    it(`carries the glibc prebuild for linux/${arch === 'x64' ? 'amd64' : arch}, linked only against what the base image has`, () => {
      const addon = join(PACKAGE, `prebuilds/linux-${arch}/dd_pprof.node.abi${NODE_ABI[major!]}.node`);
      expect(existsSync(addon), addon).toBe(true);
      const linked = new Set(readFileSync(addon).toString('latin1').match(/\b(?:lib|ld-)[\w+.-]*\.so(?:\.\d+)*/g));
      expect(linked.size).toBeGreaterThan(0);
      expect([...linked].filter((l) => !IN_BASE_IMAGE.has(l))).toEqual([]);
    });
  }
});
