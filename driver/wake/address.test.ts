import type { NetworkInterfaceInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { advertisedWakeAddress } from './address.ts';

const nic = (address: string, internal = false): NetworkInterfaceInfo => ({ address, netmask: '255.255.255.0', family: 'IPv4', mac: '00:00:00:00:00:00', internal, cidr: `${address}/24` });

describe('the advertised wake address', () => {
  it('is advertiseHost, else a host that is not a wildcard, else the first routable IPv4 address of the machine', () => {
    const interfaces = { lo: [nic('127.0.0.1', true)], 'ecs-eth0': [nic('169.254.172.2')], eth1: [nic('10.0.3.17')] };
    expect(advertisedWakeAddress({ host: '0.0.0.0', advertiseHost: 'driver.internal' }, 9092, interfaces)).toBe('driver.internal:9092');
    expect(advertisedWakeAddress({ host: '127.0.0.1' }, 9092, interfaces)).toBe('127.0.0.1:9092');
    expect(advertisedWakeAddress({ host: '0.0.0.0' }, 9092, interfaces)).toBe('10.0.3.17:9092');
    expect(advertisedWakeAddress({ host: '::' }, 9092, { lo: [nic('127.0.0.1', true)] })).toBeUndefined();
    expect(advertisedWakeAddress({ host: 'fd00::5' }, 9092, {})).toBe('[fd00::5]:9092');
  });
});
