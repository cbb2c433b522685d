import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { VendorError } from '../../shared/errors.ts';
import { silentLogger } from '../../shared/log.ts';
import { Harness, plain } from '../../test/connection-harness.ts';
import { TokenSource, runTokenCommand } from './token-source.ts';

const dir = mkdtempSync(join(tmpdir(), 'token-cmd-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const h = new Harness();
afterEach(() => h.cleanup());

/**
 * A token command that counts its runs in a file and prints `token-run-<n>-of-the-command` (or
 * the JSON form of it); with `failFirst`, its first runs exit 3 with a message on stderr.
 */
function countingCommand(name: string, format: 'raw' | 'json', failFirst = 0) {
  const counter = join(dir, `${name}.count`);
  writeFileSync(counter, '0');
  const print = format === 'raw' ? 'echo "token-run-$n-of-the-command"' : `printf '{"token": "token-run-%s-of-the-command"}' "$n"`;
  const script = `n=$(( $(cat '${counter}') + 1 )); echo $n > '${counter}'; if [ $n -le ${failFirst} ]; then echo "vault sealed" >&2; exit 3; fi; ${print}`;
  return { command: 'sh', args: ['-c', script], runs: () => Number(readFileSync(counter, 'utf8')) };
}

const token = (n: number) => `token-run-${n}-of-the-command`;

describe('runTokenCommand', () => {
  it('reads a raw token and a JSON token', async () => {
    expect(await runTokenCommand({ command: 'echo', args: ['  raw-token-value  '], format: 'raw' })).toBe('raw-token-value');
    expect(await runTokenCommand({ command: 'echo', args: ['{"token":"json-token"}'], format: 'json' })).toBe('json-token');
    expect(await runTokenCommand({ command: 'echo', args: ['{"token":"json-token"}'] })).toBe('json-token');
  });

  it('names what went wrong without repeating the output', async () => {
    const fail = (cmd: Parameters<typeof runTokenCommand>[0]) => runTokenCommand(cmd).then(() => 'ok', (e: VendorError) => e.message);
    expect(await fail({ command: 'sh', args: ['-c', 'echo denied >&2; exit 3'] })).toBe(
      'driver.auth.tokenCommand (sh) exited with code 3: denied',
    );
    expect(await fail({ command: '/no/such/command' })).toBe('driver.auth.tokenCommand (/no/such/command) could not run: ENOENT');
    expect(await fail({ command: 'echo', args: ['secret-ish not json'] })).toBe(
      'driver.auth.tokenCommand (echo) did not print a JSON object with a non-empty string attribute "token"',
    );
    expect(await fail({ command: 'echo', args: ['{"token":""}'], format: 'json' })).toMatch(/non-empty string attribute/);
    expect(await fail({ command: 'printf', args: [''], format: 'raw' })).toBe('driver.auth.tokenCommand (printf) printed no token');
  });
});

describe('TokenSource', () => {
  it('refuses both a token and a token command', () => {
    expect(
      () => new TokenSource({ token: 'x', tokenCommand: { command: 'echo' } }, { clock: new ManualClock(), log: silentLogger(), retryMs: 1 }),
    ).toThrow('driver.auth.token and driver.auth.tokenCommand cannot both be set');
  });

  it('runs the command again every refreshIntervalSeconds', async () => {
    const clock = new ManualClock();
    const cmd = countingCommand('refresh-unit', 'raw');
    const tokens = new TokenSource({ tokenCommand: { ...cmd, format: 'raw', refreshIntervalSeconds: 60 } }, { clock, log: silentLogger(), retryMs: 5000 });
    const stop = new AbortController();
    tokens.start(stop.signal);
    expect(await tokens.token()).toBe(token(1));
    expect(await tokens.token()).toBe(token(1));
    await clock.advance(60_000);
    await vi.waitFor(() => expect(cmd.runs()).toBe(2));
    await vi.waitFor(async () => expect(await tokens.token()).toBe(token(2)));
    stop.abort();
  });
});

describe('agent connection with driver.auth.tokenCommand', () => {
  it.each(['raw', 'json'] as const)('connects with a %s token and uses the refreshed one after a reconnect', async (format) => {
    const clock = new ManualClock();
    const cmd = countingCommand(`connect-${format}`, format);
    const first = await h.driver({ auth: { tokens: [token(1), token(2)] } });
    const port = first.driver.port;
    const agent = h.agent(
      plain(port, { auth: { tokenCommand: { command: cmd.command, args: cmd.args, format, refreshIntervalSeconds: 30 } } }, { kubernetes: { reconnectTimeoutMs: 100 } }),
      { clock },
    );
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1));
    await clock.advance(30_000);
    await vi.waitFor(() => expect(cmd.runs()).toBe(2));
    // The driver now accepts only the refreshed token: the agent gets back in only if it uses it.
    await first.driver.close(50);
    await h.driver({ grpc: { port }, auth: { tokens: [token(2)] } });
    await vi.waitFor(() => expect(agent.lastEnd()).toBeDefined());
    await vi.waitFor(() => expect(clock.pendingSleeps).toBeGreaterThan(1));
    await clock.advance(100);
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(2));
    expect(agent.logs.text()).not.toContain('token-run-');
  });

  it('reports a failing command, retries it, and connects once it works', async () => {
    const clock = new ManualClock();
    const cmd = countingCommand('failing', 'raw', 2);
    const { driver } = await h.driver({ auth: { tokens: [token(3)] } });
    const agent = h.agent(plain(driver.port, { auth: { tokenCommand: { ...cmd, format: 'raw' } } }, { kubernetes: { reconnectTimeoutMs: 100 } }), { clock });
    await vi.waitFor(() => expect(agent.states).toHaveLength(1));
    expect(agent.lastEnd()?.error.message).toBe('driver.auth.tokenCommand (sh) exited with code 3: vault sealed');
    await clock.advance(100);
    await vi.waitFor(() => expect(agent.states).toHaveLength(2));
    await clock.advance(100);
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1));
    expect(cmd.runs()).toBe(3);
    expect(agent.logs.lines.filter((l) => String(l['msg']).startsWith('driver token command failed, will retry'))).toHaveLength(2);
  });

  it('runs the command again when the driver refuses its token', async () => {
    const clock = new ManualClock();
    const cmd = countingCommand('refused', 'raw');
    const { driver } = await h.driver({ auth: { tokens: [token(2)] } });
    const agent = h.agent(plain(driver.port, { auth: { tokenCommand: { ...cmd, format: 'raw' } } }, { kubernetes: { reconnectTimeoutMs: 100 } }), { clock });
    await vi.waitFor(() => expect(agent.lastEnd()?.error.code).toBe('unauthenticated'));
    await clock.advance(100);
    await vi.waitFor(() => expect(agent.connectedCount()).toBe(1));
    expect(cmd.runs()).toBe(2);
  });
});
