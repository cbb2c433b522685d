import { connect, createServer, type ClientHttp2Session, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../test/support/manual-clock.ts';
import { enforcePingPolicy, type PingPolicy } from './ping-policy.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(policy: PingPolicy) {
  const clock = new ManualClock(0);
  const server: Http2Server = createServer();
  // Streams stay open, like an agent's: the response starts and never ends.
  server.on('stream', (stream) => stream.respond({ ':status': 200 }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const violations: number[] = [];
  const stop = enforcePingPolicy(policy, (s) => s.socket?.localPort === port, clock, (_s, strikes) => violations.push(strikes));
  const client: ClientHttp2Session = connect(`http://127.0.0.1:${port}`);
  client.on('error', () => undefined);
  const goaway = new Promise<{ code: number; data: string }>((resolve) =>
    client.on('goaway', (code, _last, data) => resolve({ code, data: data?.toString() ?? '' })),
  );
  cleanups.push(() => {
    stop();
    client.destroy();
    return new Promise((r) => server.close(r));
  });
  const ping = () => new Promise<boolean>((resolve) => client.ping((err) => resolve(err === null)));
  const openStream = async () => {
    const req = client.request({ ':path': '/' });
    req.on('error', () => undefined);
    await new Promise((r) => req.once('response', r));
    return req;
  };
  return { clock, violations, ping, openStream, goaway };
}

const policy: PingPolicy = { minPingIntervalMs: 10_000, permitWithoutCalls: false, maxPingStrikes: 2 };

describe('enforcePingPolicy', () => {
  it('lets pings at the allowed interval through', async () => {
    const t = await setup(policy);
    await t.openStream();
    for (let i = 0; i < 5; i++) {
      expect(await t.ping()).toBe(true);
      await t.clock.advance(10_000);
    }
    expect(t.violations).toEqual([]);
  });

  it('tolerates maxPingStrikes early pings, then closes with GOAWAY too_many_pings', async () => {
    const t = await setup(policy);
    await t.openStream();
    expect(await t.ping()).toBe(true);
    expect(await t.ping()).toBe(true); // strike 1
    expect(await t.ping()).toBe(true); // strike 2
    void t.ping(); // strike 3
    expect(await t.goaway).toEqual({ code: 11, data: 'too_many_pings' });
    expect(t.violations).toEqual([3]);
  });

  it('clears strikes after a ping at a proper interval', async () => {
    const t = await setup(policy);
    await t.openStream();
    await t.ping();
    await t.ping();
    await t.ping();
    await t.clock.advance(10_000);
    await t.ping();
    await t.ping();
    await t.ping();
    expect(t.violations).toEqual([]);
  });

  it('counts pings on a connection without open streams as strikes unless permitted', async () => {
    const refused = await setup(policy);
    const stream = await refused.openStream();
    stream.close();
    await new Promise((r) => stream.once('close', r));
    for (let i = 0; i < 3; i++) {
      await refused.ping();
      await refused.clock.advance(10_000);
    }
    expect((await refused.goaway).data).toBe('too_many_pings');

    const permitted = await setup({ ...policy, permitWithoutCalls: true });
    const s2 = await permitted.openStream();
    s2.close();
    await new Promise((r) => s2.once('close', r));
    for (let i = 0; i < 4; i++) {
      expect(await permitted.ping()).toBe(true);
      await permitted.clock.advance(10_000);
    }
    expect(permitted.violations).toEqual([]);
  });
});
