/**
 * How the agent reaches the driver: transport credentials from `driver.insecure` and `driver.tls.*`,
 * and channel options from the keepalive and proxy keys. Files are read on every dial, so rotated
 * certificates are picked up at the next reconnect.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext, getCACertificates } from 'node:tls';
import { credentials, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { VendorError } from '../../shared/errors.ts';
import { CONNECTION_DEFAULTS, type DriverSettings, type DriverTlsSettings } from './settings.ts';

function readTlsFile(key: keyof DriverTlsSettings, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new VendorError('invalid_input', `driver.tls.${key}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`, {
      issues: [{ path: `driver.tls.${key}`, message: 'cannot be read' }],
    });
  }
}

export function channelCredentials(driver: DriverSettings): ChannelCredentials {
  if (driver.insecure ?? CONNECTION_DEFAULTS.insecure) return credentials.createInsecure();
  const tls = driver.tls ?? {};
  const ca = tls.cacertFile === undefined
    ? [...getCACertificates('system'), ...getCACertificates('default')]
    : readTlsFile('cacertFile', tls.cacertFile);
  const cert = tls.clientCertFile === undefined ? undefined : readTlsFile('clientCertFile', tls.clientCertFile);
  let key = tls.clientKeyFile !== undefined ? readTlsFile('clientKeyFile', tls.clientKeyFile) : cert; // one PEM may hold both
  if (key !== undefined && tls.clientKeyFilePassword !== undefined) {
    try {
      key = Buffer.from(createPrivateKey({ key, passphrase: tls.clientKeyFilePassword }).export({ type: 'pkcs8', format: 'pem' }));
    } catch {
      const reason = 'driver.tls.clientKeyFilePassword does not decrypt the client key';
      throw new VendorError('invalid_input', reason, { issues: [{ path: 'driver.tls.clientKeyFilePassword', message: reason }] });
    }
  }
  let context;
  try {
    context = createSecureContext({ ca, ...(cert === undefined ? {} : { cert, key }) });
  } catch (e) {
    const reason = `the client certificate or key cannot be used: ${(e as Error).message}`;
    throw new VendorError('invalid_input', reason, { issues: [{ path: 'driver.tls', message: reason }] });
  }
  const skipVerify = tls.insecureSkipVerify ?? false;
  return credentials.createFromSecureContext(
    context,
    skipVerify ? { rejectUnauthorized: false, checkServerIdentity: () => undefined } : {},
  );
}

export function channelOptions(driver: DriverSettings): ChannelOptions {
  // Each dial opens its own connection: one left over from the previous stream may lead to a driver
  // replica that is going away, and agents sharing a process (tests, benchmarks) stay independent.
  const options: ChannelOptions = { 'grpc.use_local_subchannel_pool': 1 };
  const heartbeat = driver.keepAliveHeartbeatSeconds ?? CONNECTION_DEFAULTS.keepAliveHeartbeatSeconds;
  if (heartbeat > 0) options['grpc.keepalive_time_ms'] = heartbeat * 1000;
  if (driver.keepAliveTimeOutSeconds !== undefined) options['grpc.keepalive_timeout_ms'] = driver.keepAliveTimeOutSeconds * 1000;
  if (driver.noProxy ?? CONNECTION_DEFAULTS.noProxy) options['grpc.enable_http_proxy'] = 0;
  const serverName = driver.tls?.serverName;
  if (serverName !== undefined && !(driver.insecure ?? false)) {
    options['grpc.ssl_target_name_override'] = serverName;
    options['grpc.default_authority'] = serverName;
  }
  return options;
}
