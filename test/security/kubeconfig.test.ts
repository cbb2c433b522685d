/**
 * Kubeconfig references as an attacker who may register and activate accounts sends them, through the
 * real processes: the local control plane (`scripts/start.ts`: API and driver), an agent process
 * (`node agent/main.ts`) with its own `kubernetes.assignedAccounts`, and the test Kubernetes API server.
 *
 * - a kubeconfig in an allowed folder whose exec plugin would run a shell command: nothing runs;
 * - an allowed plugin made to fail with arguments of the attacker's choosing: its words stay in the log;
 * - kubeconfigs outside the allowed folder (a path, a `..` path, a symbolic link), a missing file, a
 *   folder, bad YAML, a missing context, a file named inside the kubeconfig, a secret (in Vault) the
 *   allowlist does not name, a code-loading exec env: the account ends FAILED with one and the same message, which
 *   tells nothing; the reason is only in the agent's log, which never holds a file's contents;
 * - kubeconfig contents and references to unknown engines are refused (400) by the API without being
 *   stored or echoed, and by vendor-driver.yml and `validate` without being printed;
 * - an allowed folder, an allowed exec command and an allowed secret reference work.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { startVaultDouble, type VaultDouble } from '../doubles/vault.ts';
import { startTestApiServer, type TestApiServer } from '../kube/index.ts';
import { PLANE_AUTH, planeHttp, runPlaneToExit, startPlane, stopAll, stopPlane, type RunningPlane } from '../support/control-plane-process.ts';
import { startChild, type Child } from '../support/process.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const AGENT_ID = 'kubeconfig-agent';
const KUBE_TOKEN = 'kubeconfig-attack-cluster-token-000001';
/** Written into the files the attacker points at; must never reach an answer or a log line. */
const CANARY = `canary-${Math.random().toString(36).slice(2)}`;
const GENERIC = `the kubeconfig reference is not allowed or not usable on agent ${AGENT_ID}; see the agent's log`;
const WAIT = { timeout: 30_000, interval: 100 };

/** Accounts the attacker points at kubeconfigs the agent must refuse, each with its reference. */
const REFUSED = [
  'exec-shell',
  'exec-env',
  'exec-fails',
  'outside',
  'dotdot',
  'symlink',
  'missing',
  'directory',
  'bad-yaml',
  'no-context',
  'token-file',
  'secret-ref',
] as const;
const ALLOWED = ['allowed', 'exec-allowed', 'secret-allowed'] as const;
const VAULT_TOKEN = 'hvs.kubeconfig-attack-vault-token';
const STORED_NOTHING = ['inline-yaml', 'inline-json', 'engine'] as const;

let base: string;
let allowedDir: string;
let outsideDir: string;
let marker: string;
let plugin: string;
let failing: string;
let kube: TestApiServer;
let vault: VaultDouble;
let plane: RunningPlane;
let agent: Child;
const refs = new Map<string, string>();

function kubeconfigWith(user: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const doc = { ...kube.kubeconfig({ token: KUBE_TOKEN }), ...extra } as Record<string, unknown>;
  doc['users'] = [{ name: 'test', user }];
  return stringify(doc);
}

const api = (method: string, path: string, body?: unknown) => planeHttp(`${plane.url}${path}`, method, body);

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'kubeconfig-attack-'));
  allowedDir = join(base, 'allowed');
  outsideDir = join(base, 'outside');
  const pluginDir = join(base, 'plugins');
  for (const d of [allowedDir, outsideDir, pluginDir, join(allowedDir, 'subdir'), join(base, 'plane')]) mkdirSync(d, { recursive: true });
  marker = join(base, 'exec-ran');
  kube = await startTestApiServer({ tls: true, auth: { tokens: { [KUBE_TOKEN]: { username: 'agent', groups: ['system:masters'] } } } });

  // The operator's credential plugin: prints the cluster token as an ExecCredential.
  plugin = join(pluginDir, 'kube-token');
  writeFileSync(plugin, `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${KUBE_TOKEN}"}}'\n`);
  chmodSync(plugin, 0o755);
  // An allowed plugin that repeats its first argument on stderr and fails.
  failing = join(pluginDir, 'failing-plugin');
  writeFileSync(failing, '#!/bin/sh\necho "$1" >&2\nexit 1\n');
  chmodSync(failing, 0o755);

  const good = kube.kubeconfigYaml({ token: KUBE_TOKEN });
  vault = await startVaultDouble();
  vault.mountKv('secret', 2);
  vault.putSecret('secret', 'kube/allowed', { kubeconfig: good });
  vault.putSecret('secret', 'other/prod', { kubeconfig: good });
  vault.addToken(VAULT_TOKEN, { paths: ['secret/data/*'] });
  const file = (name: string, text: string, dir = allowedDir) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const execUser = (command: string, args: string[], env: { name: string; value: string }[] = []) => ({
    exec: { apiVersion: 'client.authentication.k8s.io/v1', command, args, env },
  });
  writeFileSync(join(outsideDir, 'secret-token'), `${CANARY}-token-file`);
  refs.set('exec-shell', file('exec-shell.kubeconfig', kubeconfigWith(execUser('/bin/sh', ['-c', `touch ${marker}`]))));
  refs.set('exec-env', file('exec-env.kubeconfig', kubeconfigWith(execUser(plugin, [], [{ name: 'LD_PRELOAD', value: join(outsideDir, 'x.so') }]))));
  refs.set('exec-fails', file('exec-fails.kubeconfig', kubeconfigWith(execUser(failing, [`${CANARY}-from-args`]))));
  refs.set('outside', file('x.kubeconfig', good, outsideDir));
  // Written out by hand: path.join would take the `..` away.
  refs.set('dotdot', `${allowedDir}/../outside/x.kubeconfig`);
  symlinkSync(join(outsideDir, 'x.kubeconfig'), join(allowedDir, 'link.kubeconfig'));
  refs.set('symlink', join(allowedDir, 'link.kubeconfig'));
  refs.set('missing', join(allowedDir, 'nowhere.kubeconfig'));
  refs.set('directory', join(allowedDir, 'subdir'));
  refs.set('bad-yaml', file('bad.kubeconfig', `apiVersion: v1\nusers:\n- user:\n    token: ${CANARY}-bad-yaml\n  - : [\n`));
  refs.set('no-context', file('no-context.kubeconfig', `${good}\n`.replace(/current-context: .*/, 'current-context: ""')));
  refs.set('token-file', file('token-file.kubeconfig', kubeconfigWith({ 'token-file': join(outsideDir, 'secret-token') })));
  refs.set('secret-ref', 'encryptedFile:vault!e:secret!p:other/prod!k:kubeconfig');
  refs.set('secret-allowed', 'encryptedFile:vault!e:secret!p:kube/allowed!k:kubeconfig');
  refs.set('allowed', file('allowed.kubeconfig', good));
  refs.set('exec-allowed', file('exec-allowed.kubeconfig', kubeconfigWith(execUser(plugin, []))));

  const cwd = join(base, 'plane');
  const names = [...REFUSED, ...ALLOWED, ...STORED_NOTHING];
  writeFileSync(join(cwd, 'vendor-driver.yml'), `${PLANE_AUTH}kubernetes:\n  accounts:\n${names.map((n) => `    - name: ${n}\n`).join('')}`);
  plane = await startPlane(cwd);
  const grpc = /driver listening on (\S+) \(gRPC/.exec(plane.output())?.[1];
  if (grpc === undefined) throw new Error(`no driver address in: ${plane.output()}`);
  // The agent speaks for an identity of its own, issued as an operator would (docs/deploy.md).
  const identity = await api('PUT', '/vendor/agent-identities/attack-agents', { zones: ['vendor-agent_attack'], unzoned: true, agentIds: [AGENT_ID] });
  expect(identity.status).toBe(201);
  const issued = await api('POST', '/vendor/agent-identities/attack-agents/tokens');
  expect(issued.status).toBe(201);
  const config = join(base, 'vendor-agent.yml');
  writeFileSync(
    config,
    stringify({
      driver: { grpc, insecure: true, auth: { token: issued.json['token'] as string } },
      kubernetes: {
        reconnectTimeoutMs: 50,
        retries: { enabled: false },
        assignedAccounts: { kubeconfigDirs: [allowedDir], execCommands: [plugin, failing], secretReferences: [{ engine: 'vault', path: 'secret/kube/*' }] },
      },
      secrets: { vault: { enabled: true, url: vault.url, token: VAULT_TOKEN } },
      server: { host: '127.0.0.1', port: 0 },
      logging: { format: 'json', level: 'debug' },
    }),
  );
  agent = startChild(process.execPath, ['agent/main.ts', '--config', config], {
    cwd: ROOT,
    env: { ...process.env, VENDOR_AGENT_ID: AGENT_ID, VENDOR_DEPLOYMENT_NAME: 'vendor-agent', POD_NAMESPACE: 'attack' },
  });
  await agent.line((l) => l.includes('"msg":"connected to the driver"'));
}, 60_000);

afterAll(async () => {
  agent?.process.kill('SIGKILL');
  await agent?.exited;
  if (plane !== undefined) await stopPlane(plane.child);
  stopAll();
  await kube?.close();
  await vault?.close();
  rmSync(base, { recursive: true, force: true });
});

describe('kubeconfig references of driver-assigned accounts', () => {
  it('nothing outside the allowlist is read or run, and every refusal gives the same message; allowed ones work', async () => {
    const names = [...REFUSED, ...ALLOWED];
    const posted = await api('POST', '/vendor/accounts', names.map((name) => ({ name, kubeconfigFile: refs.get(name) })));
    expect(posted.status).toBe(200);
    expect((await api('PATCH', '/vendor/accounts', names.map((name) => ({ name, state: 'ACTIVE' })))).status).toBe(200);

    for (const name of ALLOWED) {
      await vi.waitFor(async () => expect((await api('GET', `/vendor/accounts/${name}`)).json).toMatchObject({ state: 'ACTIVE', agents: [{ agentId: AGENT_ID }] }), WAIT);
      expect((await api('GET', `/vendor/accounts/${name}`)).json['lastAssignmentMsg']).toBe(`connected to ${kube.url} (Kubernetes v1.30.0)`);
    }
    // The allowed plugin ran and its credential was accepted.
    expect(kube.requests.log().some((r) => r.path === '/version' && r.user === 'agent')).toBe(true);

    const messages: Record<string, unknown> = {};
    for (const name of REFUSED) {
      await vi.waitFor(async () => expect((await api('GET', `/vendor/accounts/${name}`)).json['state']).toBe('FAILED'), WAIT);
      messages[name] = (await api('GET', `/vendor/accounts/${name}`)).json['lastAssignmentMsg'];
    }
    expect(messages).toEqual(Object.fromEntries(REFUSED.map((name) => [name, GENERIC])));
    expect(existsSync(marker)).toBe(false);
    // The secret the allowlist does not name was never asked for.
    expect(vault.requests.filter((r) => r.path.includes('other/prod'))).toEqual([]);
    expect(vault.requests.some((r) => r.path.includes('kube/allowed'))).toBe(true);

    // The reasons are in the agent's log, one per account; no line holds what the files hold.
    const lines = agent.stdout.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const reasons = lines.filter((l) => String(l['msg']).startsWith('the kubeconfig of an assigned account cannot be used'));
    expect(new Set(reasons.map((l) => l['account']))).toEqual(new Set(REFUSED));
    expect(reasons.find((l) => l['account'] === 'dotdot')?.['msg']).toMatch(/\/allowed\/\.\.\/outside\/x\.kubeconfig is not in kubernetes\.assignedAccounts\.kubeconfigDirs \(it resolves to .*\/outside\/x\.kubeconfig\)/);
    expect(reasons.find((l) => l['account'] === 'symlink')?.['msg']).toMatch(/is not in kubernetes\.assignedAccounts\.kubeconfigDirs \(it resolves to .*outside/);
    expect(reasons.find((l) => l['account'] === 'exec-shell')?.['msg']).toMatch(/exec command of user test \/bin\/sh is not in kubernetes\.assignedAccounts\.execCommands/);
    // The failing plugin's words are only in the agent's log.
    expect(reasons.find((l) => l['account'] === 'exec-fails')?.['msg']).toContain(`exited with code 1: ${CANARY}-from-args`);
    const everything = [...agent.stdout.filter((l) => !l.includes(`${CANARY}-from-args`)), ...agent.stderr, plane.output()].join('\n');
    expect(everything).not.toContain(CANARY);
    expect(everything).not.toContain(KUBE_TOKEN);
  }, 90_000);

  it('kubeconfig contents and unknown engines get 400 from the API, are never echoed, and nothing is stored', async () => {
    const contents = kube.kubeconfigYaml({ token: `${CANARY}-inline` });
    const json = JSON.stringify(kube.kubeconfig({ token: `${CANARY}-inline-json` }));
    const cases = [
      { name: 'inline-yaml', kubeconfigFile: contents },
      { name: 'inline-json', kubeconfigFile: json },
      { name: 'engine', kubeconfigFile: 'encryptedFile:nosuchengine!x:y' },
    ];
    for (const method of ['POST', 'PATCH']) {
      for (const record of cases) {
        const answer = await api(method, '/vendor/accounts', [{ ...record, ...(method === 'PATCH' ? { state: 'ACTIVE' } : {}) }]);
        expect(answer.status).toBe(400);
        expect(answer.json['errors']).toEqual([{ path: '[0].kubeconfigFile', message: expect.stringMatching(/not kubeconfig contents|the engine is not known/) }]);
        expect(JSON.stringify(answer.json)).not.toContain(CANARY);
        expect(JSON.stringify(answer.json)).not.toContain('nosuchengine');
      }
    }
    for (const { name } of cases) {
      const account = (await api('GET', `/vendor/accounts/${name}`)).json;
      expect(account['state']).toBeUndefined();
      expect(account['config']).toEqual({});
    }
    expect(plane.output()).not.toContain(CANARY);
  });

  it('vendor-driver.yml and the agent\'s validate refuse kubeconfig contents and unknown engines without printing them', async () => {
    const cwd = mkdtempSync(join(base, 'bad-plane-'));
    const inline = JSON.stringify(kube.kubeconfig({ token: `${CANARY}-driver-file` }));
    writeFileSync(
      join(cwd, 'vendor-driver.yml'),
      `${PLANE_AUTH}kubernetes:\n  accounts:\n    - name: a\n      kubeconfigFile: ${JSON.stringify(inline)}\n    - name: b\n      kubeconfigFile: encryptedFile:nosuchengine!x:y\n`,
    );
    const refused = await runPlaneToExit(cwd);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain('kubernetes.accounts[0].kubeconfigFile: must be a file path or a secret reference, not kubeconfig contents');
    expect(refused.output).toContain('kubernetes.accounts[1].kubeconfigFile: invalid encryptedFile reference: the engine is not known');
    expect(refused.output).not.toContain(CANARY);
    expect(refused.output).not.toContain('nosuchengine');

    const file = join(cwd, 'vendor-agent.yml');
    writeFileSync(file, stringify({ kubernetes: { accounts: [{ name: 'a', kubeConfigFile: inline }, { name: 'b', kubeConfigFile: 'encryptedFile:nosuchengine!x:y' }] } }));
    const validate = startChild(process.execPath, ['agent/main.ts', 'validate', file], { cwd: ROOT });
    expect(await validate.exited).toBe(1);
    const report = [...validate.stdout, ...validate.stderr].join('\n');
    expect(report).toContain('kubernetes.accounts[0].kubeConfigFile: expected a kubeconfig file path or secret reference: must be a file path or a secret reference, not kubeconfig contents, got a string (value hidden)');
    expect(report).toMatch(/kubernetes\.accounts\[1\]\.kubeConfigFile: expected a kubeconfig file path or secret reference: invalid encryptedFile reference: the engine is not known .*value hidden/);
    expect(report).not.toContain(CANARY);
    expect(report).not.toContain('nosuchengine');
  }, 60_000);
});
