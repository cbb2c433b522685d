import { describe, expect, it } from 'vitest';
import { refusal } from '../test/refusal.ts';
import { endpointConfig, linkedAgentTokens, parseDriverFile, parseDriverGrpcConfig } from './config.ts';

const token = 'a-token-of-enough-length';

const refused = (input: unknown) => refusal(() => parseDriverGrpcConfig(input));

describe('parseDriverGrpcConfig', () => {
  it('fills every default around the tokens', () => {
    expect(parseDriverGrpcConfig({ auth: { tokens: [token] } })).toEqual({
      grpc: {
        host: '0.0.0.0',
        port: 9091,
        maxMessageBytes: 4 * 1024 * 1024,
        keepalive: { timeMs: 60_000, timeoutMs: 20_000, minPingIntervalMs: 5_000, permitWithoutCalls: false, maxPingStrikes: 2 },
      },
      auth: { tokens: [token] },
      sessions: { heartbeatIntervalMs: 10_000, leaseMs: 30_000 },
      assignment: { pollIntervalMs: 250, clockSkewMs: 5_000, fullReconcileIntervalMs: 60_000, handoverGraceMs: 10_000, sweepIntervalMs: 2_000, concurrency: 16 },
      operations: { timeoutMs: 3_900_000, pollIntervalMs: 250, redispatchAfterMs: 5_000, orphanAfterMs: 60_000, concurrency: 32 },
    });
  });

  it('accepts client certificates instead of tokens', () => {
    const c = parseDriverGrpcConfig({ grpc: { tls: { certFile: 'c.pem', keyFile: 'k.pem', clientCaFile: 'ca.pem' } } });
    expect(c.auth.tokens).toEqual([]);
  });

  it('refuses a driver that would let anyone in', () => {
    expect(refused({}).message).toBe(
      'invalid driver configuration: agents must authenticate: set auth.tokens, or grpc.tls.clientCaFile for client certificates',
    );
  });

  it('names bad keys without echoing token values', () => {
    const err = refused({ grpc: { port: 70000, colour: 'red' }, auth: { tokens: ['short-secret'] } });
    expect(err.code).toBe('invalid_input');
    expect(err.issues.map((i) => i.path).sort()).toEqual(['auth.tokens.0', 'grpc.colour', 'grpc.port']);
    expect(err.message).toContain('grpc.port must be at most 65535');
    expect(err.message).not.toContain('short-secret');
    const wrongShape = refused({ auth: { tokens: 'a-single-secret-token' } });
    expect(wrongShape.message).toBe('invalid driver configuration: auth.tokens must be a list of tokens');
  });

  it('refuses a lease not longer than the heartbeat interval', () => {
    const err = refused({ auth: { tokens: [token] }, sessions: { heartbeatIntervalMs: 5000, leaseMs: 5000 } });
    expect(err.issues).toEqual([{ path: 'sessions.leaseMs', message: 'must be longer than sessions.heartbeatIntervalMs' }]);
  });
});

describe('vendor-driver.yml as a whole', () => {
  const text = ['kubernetes:', '  accounts:', '    - name: prod', 'grpc:', '  port: 9999', 'assignment:', '  pollIntervalMs: 100'].join('\n');

  it('holds the driver-defined accounts and the endpoint sections in one strict file', () => {
    const file = parseDriverFile(text, 'vendor-driver.yml');
    expect(file.kubernetes.accounts.map((a) => a.name)).toEqual(['prod']);
    expect(file.grpc.port).toBe(9999);
    const err = refusal(() => parseDriverFile(`${text}\ncolour: red\n`, 'vendor-driver.yml'));
    expect(err.issues).toEqual([{ path: 'colour', message: 'unknown field' }]);
  });

  it('takes tokens from elsewhere besides the file, and refuses a driver no agent could join', () => {
    const file = parseDriverFile(text, 'vendor-driver.yml');
    expect(refusal(() => endpointConfig(file)).message).toContain('agents must authenticate');
    const config = endpointConfig(file, [token]);
    expect(config.auth.tokens).toEqual([token]);
    expect(config.assignment.pollIntervalMs).toBe(100);
    expect(refusal(() => endpointConfig(file, ['short'])).message).not.toContain('short');
  });

  it('reads agent tokens from the SST link, separated by commas or white space', () => {
    expect(linkedAgentTokens({})).toEqual([]);
    const env = { SST_RESOURCE_VendorAgentTokens: JSON.stringify({ value: `${token}, second-token-long-enough\nthird-token-long-enough` }) };
    expect(linkedAgentTokens(env)).toEqual([token, 'second-token-long-enough', 'third-token-long-enough']);
  });
});
