import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { startTestProxy, type TestProxy } from '../../test/support/proxy.ts';
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
  let proxy: TestProxy | undefined;
  const saved = { http_proxy: process.env['http_proxy'], no_proxy: process.env['no_proxy'] };
  afterEach(async () => {
    await h.cleanup();
    await proxy?.close();
    proxy = undefined;
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  // The proxy forwards, so both dials succeed. A dial that fails would leave its closed client one
  // more attempt about a second later (@grpc/grpc-js 1.14 does not stop a released subchannel's
  // backoff), at a proxy already gone, logged in whatever file the worker runs next.
  it('goes through http_proxy by default and straight to the driver with noProxy', async () => {
    proxy = await startTestProxy();
    process.env['http_proxy'] = proxy.url;
    delete process.env['no_proxy'];
    const { driver } = await h.driver();
    const target = `127.0.0.1:${driver.port}`;

    const proxied = h.agent(plain(driver.port), { clock: new ManualClock(), agentId: 'proxied' });
    await vi.waitFor(() => expect(proxied.connectedCount()).toBe(1), WAIT);
    expect(proxy.seen).toEqual([target]);

    const direct = h.agent(plain(driver.port, { noProxy: true }), { clock: new ManualClock(), agentId: 'direct' });
    await vi.waitFor(() => expect(direct.connectedCount()).toBe(1), WAIT);
    expect(proxy.seen).toEqual([target]);
  });
});
