/**
 * The real parts the console's browser suite drives: the control plane as `npm start` runs it (API,
 * driver and embedded table in one process, with the console built first), its local agent, and the
 * test Kubernetes API server (test/kube) as the agent's cluster.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { buildConsole } from '../../scripts/build-console.ts';
import { startTestApiServer, type TestApiServer } from '../kube/index.ts';
import { PLANE_AUTH, PLANE_TOKEN, planeHttp, startPlane, stopAll, stopPlane, type RunningPlane } from '../support/control-plane-process.ts';

const KUBE_TOKEN = 'console-suite-kube-token';

export interface ConsoleWorld {
  plane: RunningPlane;
  kube: TestApiServer;
  /** The driver-defined accounts of the config file besides `local`: `team-000` … */
  teams: string[];
  close(): Promise<void>;
}

export const teamName = (i: number) => `team-${String(i).padStart(3, '0')}`;

/**
 * Starts the world with `teamCount` driver-defined accounts, `registered` of them registered
 * (INACTIVE, alternately in zones `zone-a_ns` and `zone-b_ns`), and waits for the local agent.
 */
export async function startConsoleWorld(teamCount: number, registered: number): Promise<ConsoleWorld> {
  // The plane reads the console from the repository's build, as `npm start` does after building it.
  await buildConsole();
  const kube = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: 'developer' } } });
  const dir = mkdtempSync(join(tmpdir(), 'console-world-'));
  const kubeconfig = kube.writeKubeconfig(join(dir, 'kubeconfig'), { token: KUBE_TOKEN });
  const teams = Array.from({ length: teamCount }, (_, i) => teamName(i));
  writeFileSync(join(dir, 'vendor-driver.yml'), `${PLANE_AUTH}kubernetes:\n  accounts:\n${teams.map((t) => `    - name: ${t}\n`).join('')}`);
  const plane = await startPlane(dir, { KUBECONFIG: kubeconfig });
  await vi.waitFor(() => {
    if (!/\[agent\] .*connected to the driver/.test(plane.output())) throw new Error('the local agent has not connected yet');
  }, { timeout: 30_000, interval: 100 });
  const records = teams.slice(0, registered).map((name, i) => ({ name, zoneId: i % 2 === 0 ? 'zone-a_ns' : 'zone-b_ns' }));
  const answer = await planeHttp(`${plane.url}/vendor/accounts`, 'POST', records, PLANE_TOKEN);
  if (answer.status !== 200) throw new Error(`registering the suite's accounts answered ${answer.status}: ${JSON.stringify(answer.json)}`);
  return {
    plane,
    kube,
    teams,
    close: async () => {
      await stopPlane(plane.child);
      stopAll();
      await kube.close();
    },
  };
}
