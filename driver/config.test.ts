import { describe, expect, it } from 'vitest';
import { refusal } from '../test/refusal.ts';
import { endpointConfig, parseDriverFile, parseDriverGrpcConfig } from './config.ts';

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
        maxStreams: 10_000,
        behindTlsProxy: false,
      },
      auth: { tokens: [token], identities: [], maxStreamsPerIdentity: 100, recheckIntervalMs: 2_000, certificateCommonName: false },
      sessions: { heartbeatIntervalMs: 10_000, leaseMs: 30_000 },
      assignment: { pollIntervalMs: 250, clockSkewMs: 5_000, fullReconcileIntervalMs: 60_000, handoverGraceMs: 10_000, sweepIntervalMs: 2_000, concurrency: 16 },
      operations: { timeoutMs: 3_900_000, pollIntervalMs: 250, redispatchAfterMs: 5_000, orphanAfterMs: 60_000, concurrency: 32 },
    });
  });

  it('accepts client certificates instead of tokens', () => {
    const c = parseDriverGrpcConfig({ grpc: { tls: { certFile: 'c.pem', keyFile: 'k.pem', clientCaFile: 'ca.pem' } } });
    expect(c.auth.tokens).toEqual([]);
  });

  it('needs no credential in the file: tokens issued through the API authenticate agents', () => {
    expect(parseDriverGrpcConfig({}).auth).toMatchObject({ tokens: [], identities: [] });
  });

  it('takes identities with their allowances and tokens, as tokens or sha256 digests', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const c = parseDriverGrpcConfig({ auth: { identities: [{ name: 'edge', zones: ['edge-*'], tokens: [token, digest] }] } });
    expect(c.auth.identities).toEqual([{ name: 'edge', zones: ['edge-*'], unzoned: false, agentIds: [], staticAccounts: [], tokens: [token, digest] }]);
  });

  it('names bad identities by key path without echoing their tokens', () => {
    const err = refused({
      auth: {
        tokens: [token],
        identities: [
          { name: 'edge', zones: ['bad zone'], tokens: ['short-secret'] },
          { name: 'edge', tokens: [token, 'sha256:NOTHEX-a-secret-value'] },
          { name: '-x-', colour: 'red', tokens: [`vat_AAAAAAAAAAAA_${'s'.repeat(43)}`] },
        ],
      },
    });
    expect(err.issues.map((i) => i.path).sort()).toEqual([
      'auth.identities.0.tokens.0',
      'auth.identities.0.zones.0',
      'auth.identities.1.tokens.1',
      'auth.identities.2.colour',
      'auth.identities.2.name',
      'auth.identities.2.tokens.0',
    ]);
    expect(err.message).not.toMatch(/short-secret|NOTHEX|a-token-of-enough|sssss/);
    // The checks across entries run once every entry is well formed.
    const across = refused({ auth: { tokens: [token], identities: [{ name: 'edge', tokens: [token] }, { name: 'edge' }] } });
    expect(across.issues).toEqual([
      { path: 'auth.identities.0.tokens.0', message: 'is also a token of auth.tokens' },
      { path: 'auth.identities.1.name', message: 'is the name of an identity listed before' },
    ]);
    expect(across.message).not.toContain(token);
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

  it('takes identities from elsewhere besides the file, checked as the file\'s are', () => {
    const file = parseDriverFile(text, 'vendor-driver.yml');
    const local = { name: 'local', zones: [], unzoned: true, agentIds: ['a'], staticAccounts: [], tokens: [token] };
    const config = endpointConfig(file, [local]);
    expect(config.auth.identities.map((i) => i.name)).toEqual(['local']);
    expect(config.auth.tokens).toEqual([]);
    expect(config.assignment.pollIntervalMs).toBe(100);
    expect(refusal(() => endpointConfig(file, [{ ...local, tokens: ['short'] }])).message).not.toContain('short');
  });
});
