import { describe, expect, it } from 'vitest';
import { refusal } from '../test/refusal.ts';
import { parseDriverGrpcConfig } from './config.ts';

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
