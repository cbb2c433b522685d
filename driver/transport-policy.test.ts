import { describe, expect, it } from 'vitest';
import { captureLogger } from '../test/capture-log.ts';
import { refusal } from '../test/refusal.ts';
import { parseDriverGrpcConfig } from './config.ts';
import { checkTransportPolicy, productionIssues } from './transport-policy.ts';

const token = 'a-fleet-token-of-enough-length';

describe('what production mode refuses of the driver', () => {
  it('refuses fleet-wide tokens and plaintext on a network address, naming the keys and never a token', () => {
    const config = parseDriverGrpcConfig({ auth: { tokens: [token] }, grpc: { host: '0.0.0.0' } });
    expect(productionIssues(config).map((i) => i.path)).toEqual(['auth.tokens', 'grpc.tls']);
    const err = refusal(() => checkTransportPolicy(config, true, captureLogger().log));
    expect(err.message).toMatch(/^the driver does not start in production mode: auth\.tokens: .*; grpc\.tls: /);
    expect(err.message).not.toContain(token);
  });

  it('allows plaintext on loopback, or behind a proxy that terminates TLS', () => {
    expect(productionIssues(parseDriverGrpcConfig({ grpc: { host: '127.0.0.1' } }))).toEqual([]);
    expect(productionIssues(parseDriverGrpcConfig({ grpc: { host: '::1' } }))).toEqual([]);
    expect(productionIssues(parseDriverGrpcConfig({ grpc: { host: '0.0.0.0', behindTlsProxy: true } }))).toEqual([]);
    expect(productionIssues(parseDriverGrpcConfig({ grpc: { host: '0.0.0.0', tls: { certFile: 'c', keyFile: 'k' } } }))).toEqual([]);
  });

  it('elsewhere only warns, once for each', () => {
    const logs = captureLogger();
    checkTransportPolicy(parseDriverGrpcConfig({ auth: { tokens: [token] }, grpc: { host: '0.0.0.0' } }), false, logs.log);
    expect(logs.lines.map((l) => [l.level, String(l.msg).slice(0, 41)])).toEqual([
      [40, 'agents may authenticate with a fleet-wide'],
      [40, 'listening in plaintext on a network addre'],
    ]);
    expect(logs.text()).not.toContain(token);
  });
});
