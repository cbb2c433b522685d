import { isIPv6 } from 'node:net';

/** A replica's wake address as recorded on its session items: `host:port`, IPv6 in brackets. */
export function formatWakeAddress(host: string, port: number): string {
  return `${isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** The host and port of a recorded address; undefined when it is not one. */
export function parseWakeAddress(address: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(address);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (match[1] ?? match[2]) as string, port };
}
