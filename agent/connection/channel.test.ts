import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { Harness, plain } from '../../test/connection-harness.ts';
import { channelOptions } from './channel.ts';

/** Connections are real gRPC streams: on a loaded machine they take longer than vi.waitFor's default second. */
const WAIT = { timeout: 10_000, interval: 20 };

describe('channelOptions', () => {
  it('sends keepalive pings every 60 s when keepAliveHeartbeatSeconds is not set', () => {
    expect(channelOptions({})).toEqual({ 'grpc.use_local_subchannel_pool': 1, 'grpc.keepalive_time_ms': 60_000 });
  });

  it('sends none with 0, and every n seconds with n, with the configured timeout', () => {
    expect(channelOptions({ keepAliveHeartbeatSeconds: 0 })).toEqual({ 'grpc.use_local_subchannel_pool': 1 });
    expect(channelOptions({ keepAliveHeartbeatSeconds: 15, keepAliveTimeOutSeconds: 5 })).toEqual({
      'grpc.use_local_subchannel_pool': 1,
      'grpc.keepalive_time_ms': 15_000,
      'grpc.keepalive_timeout_ms': 5_000,
    });
  });

  it('turns proxy use off with noProxy and overrides the TLS name with tls.serverName', () => {
    expect(channelOptions({ noProxy: true, tls: { serverName: 'driver.internal' } })).toEqual({
      'grpc.use_local_subchannel_pool': 1,
      'grpc.keepalive_time_ms': 60_000,
      'grpc.enable_http_proxy': 0,
      'grpc.ssl_target_name_override': 'driver.internal',
      'grpc.default_authority': 'driver.internal',
    });
  });
});

describe('agent connection and the proxy environment', () => {
  const h = new Harness();
  let proxy: Server | undefined;
  const saved = { http_proxy: process.env['http_proxy'], no_proxy: process.env['no_proxy'] };
  afterEach(async () => {
    await h.cleanup();
    proxy?.close();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  /** A "proxy" that only counts the connections made to it and answers none. */
  async function countingProxy(): Promise<{ port: number; connections: () => number }> {
    let count = 0;
    const server = createServer((socket) => {
      count++;
      socket.destroy();
    });
    proxy = server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as AddressInfo).port, connections: () => count };
  }

  it('goes through http_proxy by default and straight to the driver with noProxy', async () => {
    const p = await countingProxy();
    process.env['http_proxy'] = `http://127.0.0.1:${p.port}`;
    delete process.env['no_proxy'];
    const { driver } = await h.driver();

    const proxied = h.agent(plain(driver.port), { clock: new ManualClock(), agentId: 'proxied' });
    await vi.waitFor(() => expect(proxied.states).toHaveLength(1), WAIT);
    expect(proxied.connectedCount()).toBe(0);
    const viaProxy = p.connections();
    expect(viaProxy).toBeGreaterThan(0);

    const direct = h.agent(plain(driver.port, { noProxy: true }), { clock: new ManualClock(), agentId: 'direct' });
    await vi.waitFor(() => expect(direct.connectedCount()).toBe(1), WAIT);
    expect(p.connections()).toBe(viaProxy);
  });
});
