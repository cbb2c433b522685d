import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where kube-apiserver and etcd are, or why the real-cluster suite cannot run here. */
export type ClusterBinaries =
  | { available: true; kubeApiserver: string; etcd: string; source: string }
  | { available: false; reason: string };

/** The cache folder test/cluster/provision.sh writes to; the same rules as the script. */
export function kubeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.VENDOR_KUBE_CACHE) return env.VENDOR_KUBE_CACHE;
  if (process.getuid?.() === 0) return '/var/cache/vendor-agent/kube';
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'vendor-agent', 'kube');
}

/** Reads `KEY=VALUE` lines; values are taken verbatim (the script writes no quoting). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && !line.startsWith('#')) out[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return out;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function checked(kubeApiserver: string, etcd: string, source: string): ClusterBinaries {
  const missing = [kubeApiserver, etcd].filter((p) => !isExecutable(p));
  if (missing.length > 0) {
    return { available: false, reason: `${source} names binaries that are not executable: ${missing.join(', ')}` };
  }
  return { available: true, kubeApiserver, etcd, source };
}

/**
 * Finds the binaries: explicit KUBE_APISERVER_BIN and ETCD_BIN, then envtest's KUBEBUILDER_ASSETS,
 * then what provision.sh recorded in `<cache>/env` (which also carries its reason when it failed).
 */
export function findClusterBinaries(env: NodeJS.ProcessEnv = process.env): ClusterBinaries {
  if (env.KUBE_APISERVER_BIN && env.ETCD_BIN) {
    return checked(env.KUBE_APISERVER_BIN, env.ETCD_BIN, 'KUBE_APISERVER_BIN and ETCD_BIN');
  }
  if (env.KUBEBUILDER_ASSETS) {
    const dir = env.KUBEBUILDER_ASSETS;
    return checked(join(dir, 'kube-apiserver'), join(dir, 'etcd'), `KUBEBUILDER_ASSETS=${dir}`);
  }
  const envFile = join(kubeCacheDir(env), 'env');
  let text: string;
  try {
    text = readFileSync(envFile, 'utf8');
  } catch {
    return {
      available: false,
      reason: `test/cluster/provision.sh has not been run on this machine (no ${envFile}), and neither KUBEBUILDER_ASSETS nor KUBE_APISERVER_BIN/ETCD_BIN is set`,
    };
  }
  const recorded = parseEnvFile(text);
  if (recorded.KUBE_APISERVER_BIN && recorded.ETCD_BIN) {
    const source = recorded.KUBE_SOURCE ? `${recorded.KUBE_SOURCE} via ${envFile}` : envFile;
    return checked(recorded.KUBE_APISERVER_BIN, recorded.ETCD_BIN, source);
  }
  return {
    available: false,
    reason: recorded.KUBE_UNAVAILABLE_REASON || `${envFile} names no binaries and gives no reason`,
  };
}
