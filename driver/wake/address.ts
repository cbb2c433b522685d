import { networkInterfaces } from 'node:os';
import { formatWakeAddress } from '../../shared/wake/address.ts';
import type { WakeConfig } from './config.ts';

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The address the replica records for the API to send wakes to: the configured `advertiseHost`,
 * else `host` unless it is a wildcard, else the machine's first IPv4 address that is not loopback
 * (on ECS, the task's address in the VPC; link-local addresses, such as the one Fargate gives the task
 * metadata interface, are skipped). Undefined when there is none.
 */
export function advertisedWakeAddress(config: Pick<WakeConfig, 'host' | 'advertiseHost'>, port: number, interfaces = networkInterfaces()): string | undefined {
  let host = config.advertiseHost ?? (WILDCARDS.has(config.host) ? undefined : config.host);
  host ??= Object.values(interfaces)
    .flat()
    .find((i) => i !== undefined && i.family === 'IPv4' && !i.internal && !i.address.startsWith('169.254.'))?.address;
  return host === undefined ? undefined : formatWakeAddress(host, port);
}
