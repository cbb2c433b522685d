/**
 * A TCP load balancer on loopback, standing in for the one in front of the driver replicas: each
 * connection goes to the next backend in turn, and to the one after it when that one refuses.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpBalancer {
  readonly port: number;
  /** Backends (ports on 127.0.0.1), replaced as a whole. */
  backends: number[];
  close(): Promise<void>;
}

export async function startTcpBalancer(backends: number[]): Promise<TcpBalancer> {
  let next = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const balancer: TcpBalancer = { port: 0, backends, close: async () => undefined };
  const server: Server = createServer((client) => {
    track(client);
    client.pause();
    const order = balancer.backends.map((_, i) => balancer.backends[(next + i) % balancer.backends.length] as number);
    next++;
    const attempt = (i: number) => {
      if (i >= order.length || client.destroyed) {
        client.destroy();
        return;
      }
      const upstream = connect(order[i] as number, '127.0.0.1');
      track(upstream);
      upstream.once('error', () => attempt(i + 1));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(balancer, {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return balancer;
}
