/**
 * The local control plane as `npm start` runs it (`scripts/start.ts`, same Node), started as a child
 * process on free ports, for tests that drive it over HTTP. `stopAll()` kills what is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

const START = join(import.meta.dirname, '../../scripts/start.ts');
const running: ChildProcess[] = [];

export const PLANE_TOKEN = 'control-plane-test-token-0123456789abcdef';
/** The `api.auth` of a vendor-driver.yml accepting PLANE_TOKEN. */
export const PLANE_AUTH = `api:\n  auth:\n    adminToken: ${PLANE_TOKEN}\n`;

export interface RunningPlane {
  child: ChildProcess;
  url: string;
  output(): string;
}

/** Kills every control plane a test left running. */
export function stopAll(): void {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
}

/** Starts the control plane in `cwd`; resolves once the API listens and the agent's start-up is decided. */
export async function startPlane(cwd: string, env: Record<string, string> = {}): Promise<RunningPlane> {
  const { KUBECONFIG: _k, VENDOR_LOCAL_KUBECONFIG: _l, ...inherited } = process.env;
  const child = spawn(process.execPath, [START], {
    cwd,
    env: { ...inherited, PORT: '0', GRPC_PORT: '0', VENDOR_AGENT_HEALTH_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const match = /API listening on (http:\/\/\S+)/.exec(output);
      // The last line of the start-up says whether an agent runs.
      if (match?.[1] !== undefined && /agent started|no agent started/.test(output)) resolve(match[1]);
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

/** SIGTERM, then the exit code. */
export async function stopPlane(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

/** Runs the start script to its exit; returns the exit code and everything it printed. */
export async function runPlaneToExit(cwd: string, env: Record<string, string> = {}): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [START], { cwd, env: { ...process.env, PORT: '0', GRPC_PORT: '0', VENDOR_AGENT_HEALTH_PORT: '0', ...env } });
  running.push(child);
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, output };
}

/** A JSON request to the plane's API with PLANE_TOKEN (or another token, or none with null). */
export async function planeHttp(url: string, method = 'GET', body?: unknown, token: string | null = PLANE_TOKEN): Promise<{ status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}
