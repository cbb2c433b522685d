import { isIP } from 'node:net';

/**
 * Whether a host name or address is loopback: `localhost`, 127.0.0.0/8, `::1`, and 127.0.0.0/8 as an
 * IPv4-mapped IPv6 address (how a dual-stack socket names an IPv4 peer). Any other address, the
 * wildcard `0.0.0.0` and `::` included, reaches or is reached from beyond this machine.
 */
export function isLoopback(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (bare.toLowerCase() === 'localhost') return true;
  const v4 = bare.toLowerCase().startsWith('::ffff:') ? bare.slice(7) : bare;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(bare) === 6 && /^(0{0,4}:){2,7}0{0,3}1$/.test(bare);
}
