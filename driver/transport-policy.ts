/**
 * What the driver refuses at start in production mode (`VENDOR_ENV=production`), and warns about
 * elsewhere: fleet-wide agent tokens, which let their holder act as any agent, and plaintext on an
 * address other than loopback, which shows tokens to anyone on the path.
 */
import { VendorError, type Issue } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import type { DriverGrpcConfig } from './config.ts';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** The listen addresses the driver takes as loopback: a narrower set than shared/loopback.ts accepts, kept as the driver has always judged them. */
function isLoopbackListenHost(host: string): boolean {
  return LOOPBACK.test(host);
}

/** What production mode refuses of `config`; empty when it may run. */
export function productionIssues(config: DriverGrpcConfig): Issue[] {
  const issues: Issue[] = [];
  if (config.auth.tokens.length > 0) {
    issues.push({
      path: 'auth.tokens',
      message: 'fleet-wide agent tokens (auth.tokens) are refused in production mode; issue tokens per agent identity (auth.identities, or POST /vendor/agent-identities/{name}/tokens)',
    });
  }
  if (config.grpc.tls === undefined && !isLoopbackListenHost(config.grpc.host) && !config.grpc.behindTlsProxy) {
    issues.push({
      path: 'grpc.tls',
      message: `production mode does not listen in plaintext on ${config.grpc.host}: set grpc.tls, or grpc.behindTlsProxy when a load balancer in front terminates TLS`,
    });
  }
  return issues;
}

/** Refuses in production mode what `productionIssues` names; elsewhere logs a warning for each. */
export function checkTransportPolicy(config: DriverGrpcConfig, production: boolean, log: Logger): void {
  const issues = productionIssues(config);
  if (production && issues.length > 0) {
    throw new VendorError('invalid_input', `the driver does not start in production mode: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  if (config.auth.tokens.length > 0) {
    log.warn({ tokens: config.auth.tokens.length }, 'agents may authenticate with a fleet-wide token (auth.tokens): each holder can act as any agent; for local use only (refused in production mode)');
  }
  if (config.grpc.tls === undefined && !isLoopbackListenHost(config.grpc.host)) {
    log.warn({ host: config.grpc.host, behindTlsProxy: config.grpc.behindTlsProxy }, config.grpc.behindTlsProxy ? 'listening in plaintext behind a TLS-terminating proxy' : 'listening in plaintext on a network address: agent tokens cross the network unencrypted (refused in production mode)');
  }
}
