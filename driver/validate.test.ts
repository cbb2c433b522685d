import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../shared/version.ts';
import { parseConfigCommand } from '../shared/config-command.ts';
import { parseDriverFile } from './config.ts';
import { checkDriverText } from './validate.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(root, 'driver/main.ts');
const SECRET_ADMIN = 'short-admin-secret-1';
const SECRET_TOKEN = 'tiny-secret';

const BAD = `api:
  auth:
    adminToken: ${SECRET_ADMIN}
grcp:
  port: 9091
grpc:
  prot: 1
  keepalive:
    timeMs: 5
auth:
  tokens: [${SECRET_TOKEN}]
  identities:
    - name: edge
      tokns: []
kubernetes:
  accounts:
    - name: a
      namspaces: [x]
`;

function problems(text: string): Record<string, string> {
  const checked = checkDriverText(text, 'test.yml');
  expect(checked.config).toBeUndefined();
  return Object.fromEntries(checked.problems.map((p) => [p.path, p.value === undefined ? p.message : `${p.message}, got ${p.value}`]));
}

function file(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'driver-validate-')), 'vendor-driver.yml');
  writeFileSync(path, text);
  return path;
}

function run(...args: string[]) {
  const { status, stdout, stderr } = spawnSync(process.execPath, [MAIN, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, VENDOR_DRIVER_CONFIG: '' } });
  return { status, stdout, stderr };
}

describe('checking vendor-driver.yml', () => {
  it('names every problem at its key path, refused keys with the closest known key', () => {
    expect(problems(BAD)).toEqual({
      grcp: 'unknown key, refused; the closest known key is grpc',
      'grpc.prot': 'unknown key, refused; the closest known key is grpc.port',
      'grpc.keepalive.timeMs': 'must be at least 1000, got 5',
      'api.auth.adminToken': 'must be at least 32 characters, got a string (value hidden)',
      'auth.tokens[0]': 'must be at least 16 characters, got a string (value hidden)',
      'auth.identities[0].tokns': 'unknown key, refused; the closest known key is auth.identities[0].tokens',
      'kubernetes.accounts[0].namspaces': 'unknown key, refused; the closest known key is kubernetes.accounts[0].namespaces',
    });
  });

  it('tells a missing required key, a value of the wrong type, and names used twice', () => {
    expect(problems('grpc:\n  tls:\n    keyFile: /k\n  port: "9091"\n')).toEqual({
      'grpc.tls.certFile': 'expected this key, it is required, got nothing',
      'grpc.port': 'expected number, got "9091"',
    });
    expect(problems('kubernetes:\n  accounts:\n    - name: a\n    - name: a\n')).toEqual({
      'kubernetes.accounts[1].name': 'duplicate name "a" (first at kubernetes.accounts[0])',
    });
  });

  it('reports YAML syntax errors by line and column', () => {
    expect(Object.keys(problems('grpc:\n  port: 1\n  port: 2\n'))).toEqual(['line 3, column 3']);
  });

  it('agrees with the driver reading the file at start', () => {
    const texts = [
      readFileSync(join(root, 'vendor-driver.example.yml'), 'utf8'),
      BAD,
      '',
      'grpc:\n  port: 70000\n',
      'sessions:\n  heartbeatIntervalMs: 5000\n  leaseMs: 4000\n',
      `auth:\n  identities:\n    - name: a\n      tokens: [${'x'.repeat(20)}]\n    - name: b\n      tokens: [${'x'.repeat(20)}]\n`,
      'kubernetes:\n  accounts:\n    - name: a\n      kubeconfigFile: /k\n      kubeConfigFile: /k\n',
      'kubernetes:\n  accounts:\n    - name: a\n    - name: a\n',
    ];
    for (const text of texts) {
      let starts = true;
      try {
        parseDriverFile(text, 'test.yml');
      } catch {
        starts = false;
      }
      const checked = checkDriverText(text, 'test.yml');
      expect({ text, valid: checked.config !== undefined }).toEqual({ text, valid: starts });
      expect(checked.problems.length === 0).toBe(starts);
    }
  });
});

describe('vendor-driver validate and version', () => {
  it('parses the command line', () => {
    expect(parseConfigCommand([])).toEqual({ name: 'run', file: undefined });
    expect(parseConfigCommand(['-c', 'a.yml'])).toEqual({ name: 'run', file: 'a.yml' });
    expect(parseConfigCommand(['validate'])).toEqual({ name: 'validate', file: undefined });
    expect(parseConfigCommand(['validate', 'a.yml'])).toEqual({ name: 'validate', file: 'a.yml' });
    expect(parseConfigCommand(['validate', '--config', 'a.yml'])).toEqual({ name: 'validate', file: 'a.yml' });
    for (const argv of [['--version'], ['-V'], ['version']]) expect(parseConfigCommand(argv)).toEqual({ name: 'version' });
    expect(parseConfigCommand(['validate', 'a', 'b']).name).toBe('usage');
    expect(parseConfigCommand(['start']).name).toBe('usage');
    expect(parseConfigCommand(['--port', '1']).name).toBe('usage');
  });

  it('exits 0 for a valid file, 1 for an invalid one (never printing a secret), 2 for a usage error', () => {
    const valid = run('validate', 'vendor-driver.example.yml');
    expect(valid.status).toBe(0);
    expect(valid.stdout).toBe(`${join(root, 'vendor-driver.example.yml')}: valid (2 accounts)\n`);

    const path = file(BAD);
    const invalid = run('validate', '--config', path);
    expect(invalid.status).toBe(1);
    expect(invalid.stderr).toContain(`${path}: not valid, 7 problems:\n`);
    expect(invalid.stderr).toContain('  error   grpc.prot: unknown key, refused; the closest known key is grpc.port\n');
    expect(invalid.stderr).not.toContain(SECRET_ADMIN);
    expect(invalid.stderr).not.toContain(SECRET_TOKEN);

    const usage = run('validate', 'a.yml', 'b.yml');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('validate takes one file\nusage:');
  });

  it('refuses to start with an invalid file, printing the same report as validate before connecting anywhere', () => {
    const path = file(BAD);
    const started = run('--config', path);
    expect(started.status).toBe(1);
    expect(started.stderr).toContain(`${path}: not valid, 7 problems:\n`);
    expect(started.stderr).toContain('  error   grpc.prot: unknown key, refused; the closest known key is grpc.port\n');
    expect(`${started.stdout}${started.stderr}`).toContain('the driver did not start: its configuration file has problems (listed above)');
    expect(`${started.stdout}${started.stderr}`).not.toContain(SECRET_ADMIN);
    expect(`${started.stdout}${started.stderr}`).not.toContain(SECRET_TOKEN);
  });

  it('prints the version', () => {
    expect(run('--version').stdout).toBe(`vendor-driver ${VERSION}\n`);
    expect(run('version').status).toBe(0);
  });
});
