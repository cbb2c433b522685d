/**
 * Keep-alive connection pools shared by the cluster clients of one API server with the same TLS
 * material (accounts on one cluster): a newly held account's first request (its `GET /version`
 * check) goes over a connection already open instead of a new TCP and TLS handshake. Credentials
 * travel per request (headers), and a client certificate is part of the TLS material, so two clients
 * share connections only when the server would see the same TLS identity from both. The pool's
 * socket limit grows with its clients (`perClient` each), so sharing takes no concurrency from any.
 */
import { createHash } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';

interface Pool {
  agent: HttpAgent;
  clients: number;
}

const pools = new Map<string, Pool>();

function fingerprint(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { b: value.toString('base64') };
  if (Array.isArray(value)) return value.map(fingerprint);
  return value ?? null;
}

/** A digest of what tells two pools apart (never the key material itself as a map key). */
export function poolKey(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts.map(fingerprint))).digest('base64url');
}

/** A lease on a shared pool: `release()` once, when the client closes or needs another pool. */
export interface PoolLease {
  readonly agent: HttpAgent;
  release(): void;
}

/** The pool of `key`, made by `make` when there is none; its limit is `perClient` per client holding a lease. */
export function leasePool(key: string, perClient: number, make: () => HttpAgent): PoolLease {
  let pool = pools.get(key);
  if (pool === undefined) {
    pool = { agent: make(), clients: 0 };
    pools.set(key, pool);
  }
  const held = pool;
  held.clients++;
  held.agent.maxSockets = perClient * held.clients;
  let released = false;
  return {
    agent: held.agent,
    release: () => {
      if (released) return;
      released = true;
      held.clients--;
      if (held.clients > 0) {
        held.agent.maxSockets = perClient * held.clients;
        return;
      }
      if (pools.get(key) === held) pools.delete(key);
      held.agent.destroy();
    },
  };
}

/** How many shared pools are open (for tests). */
export function openPools(): number {
  return pools.size;
}
