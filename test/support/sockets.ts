/**
 * What a process listens on, read from /proc as any local process can: the way an attacker on the
 * same machine finds a server to try.
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** Inodes of the sockets `pid` holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1] !== undefined) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** The TCP ports (IPv4 and IPv6) `pid` listens on. */
export function listeningTcpPorts(pid: number): number[] {
  const inodes = socketInodes(pid);
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is hex `addr:port`; state 0A is LISTEN; field 9 is the inode.
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) ports.add(Number.parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** The paths of the unix sockets `pid` listens on. */
export function unixSocketsOf(pid: number): string[] {
  const inodes = socketInodes(pid);
  const paths: string[] = [];
  for (const line of readFileSync(`/proc/${pid}/net/unix`, 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // Flags 00010000 is __SO_ACCEPTCON (listening); field 6 is the inode, 7 the path.
    if (fields[3] === '00010000' && inodes.has(fields[6] ?? '') && fields[7] !== undefined) paths.push(fields[7]);
  }
  return paths;
}
