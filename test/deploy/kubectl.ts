/**
 * `kubectl kustomize`, when this machine has kubectl (.ci/run installs Debian's package). When it
 * does not, `availability.reason` says why, and the tests that need it report that instead of
 * running. `VENDOR_KUBECTL` names another kubectl to use (to check an older or newer kustomize).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { parseObjects, type KubeObject } from './kube-objects.ts';

const KUBECTL = process.env.VENDOR_KUBECTL || 'kubectl';

export type KubectlAvailability = { available: true; version: string } | { available: false; reason: string };

export function kubectlAvailability(): KubectlAvailability {
  const result = spawnSync(KUBECTL, ['version', '--client', '--output=json'], { encoding: 'utf8', timeout: 30_000 });
  if (result.error !== undefined) {
    const code = (result.error as NodeJS.ErrnoException).code;
    return { available: false, reason: code === 'ENOENT' ? `${KUBECTL} is not installed (.ci/run installs it)` : `${KUBECTL} cannot run: ${result.error.message}` };
  }
  if (result.status !== 0) return { available: false, reason: `kubectl version --client exited ${result.status}: ${result.stderr.trim().split('\n')[0]}` };
  const version = (JSON.parse(result.stdout) as { clientVersion?: { gitVersion?: string } }).clientVersion?.gitVersion ?? 'unknown';
  return { available: true, version };
}

/** `kubectl kustomize <dir>`, parsed. A build error throws with kubectl's message. */
export function kustomize(dir: string): KubeObject[] {
  const text = execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  return parseObjects(text, `kubectl kustomize ${dir}`);
}
