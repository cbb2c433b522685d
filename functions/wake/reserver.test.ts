/** The API's reservation asks against replicas of the test's own making, over real HTTP: which replica is asked. */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../shared/clock.ts';
import { ManualClock } from '../../test/support/manual-clock.ts';
import { RESERVE_ASK_HEADER } from '../../shared/wake/reserve-ask.ts';
import { refusal } from '../../test/refusal.ts';
import { Reserver, reserveWaitFromEnv, spreadIndex } from './reserver.ts';

const SECRET = 'reserver-secret-for-tests-0123456789abcdef';
const servers: Server[] = [];
const reservers: Reserver[] = [];
afterEach(async () => {
  for (const r of reservers.splice(0)) r.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

/**
 * A replica that holds no agent of the account (204, or `status`: 403 as a replica of an earlier
 * version answers the path, 429 over its rate), and counts the asks it gets.
 */
async function replica(status = 204): Promise<{ address: string; asks: string[] }> {
  const asks: string[] = [];
  const server = createServer((req, res) => {
    asks.push(String(req.headers[RESERVE_ASK_HEADER]).split(' ')[1] as string);
    req.resume();
    req.on('end', () => res.writeHead(status, { 'content-length': '0' }).end());
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, asks };
}

const idOf = (i: number) => createHash('sha256').update(`op-${i}`).digest('hex').slice(0, 32);
const operation = { account: 'prod', submittedBy: 'admin:root', idempotencyKey: 'k', requestHash: 'h'.repeat(64), record: { action: 'deploy' as const, objects: 1 }, now: 1, request: '' };

describe('Reserver', () => {
  it('asks one replica per operation, the same for the same id, spread over the replicas of the account', async () => {
    const a = await replica();
    const b = await replica();
    const reserver = new Reserver({ replicas: { addresses: async () => [a.address, b.address] }, secret: SECRET, clock: systemClock, tell: () => undefined });
    reservers.push(reserver);
    const ids = Array.from({ length: 40 }, (_, i) => idOf(i));
    for (const id of ids) expect(await reserver.reserve([{ zone: 'z' }], id, operation)).toBeUndefined();
    expect(a.asks.length + b.asks.length).toBe(40);
    expect(a.asks.length).toBeGreaterThan(5);
    expect(b.asks.length).toBeGreaterThan(5);
    // The same id goes to the same replica again.
    await reserver.reserve([{ zone: 'z' }], ids[0]!, operation);
    const asked = [a, b][spreadIndex(ids[0]!, 2)]!;
    expect(asked.asks.filter((id) => id === ids[0])).toHaveLength(2);
  });

  it('skips a replica that refused for a while (its operations go queued without asking), not one over its rate', async () => {
    const refusing = await replica(403);
    const busy = await replica(429);
    const clock = new ManualClock(1_000_000);
    const reserver = new Reserver({ replicas: { addresses: async () => [refusing.address] }, secret: SECRET, clock, tell: () => undefined, skipRefusingMs: 30_000 });
    const busyReserver = new Reserver({ replicas: { addresses: async () => [busy.address] }, secret: SECRET, clock, tell: () => undefined, skipRefusingMs: 30_000 });
    reservers.push(reserver, busyReserver);
    for (let i = 0; i < 5; i++) {
      expect(await reserver.reserve([{ zone: 'z' }], idOf(i), operation)).toBeUndefined();
      expect(await busyReserver.reserve([{ zone: 'z' }], idOf(i), operation)).toBeUndefined();
    }
    expect(refusing.asks).toHaveLength(1);
    expect(busy.asks).toHaveLength(5);
    // Asked again once the skip is over, and skipped again when it still refuses.
    await clock.advance(30_000);
    expect(await reserver.reserve([{ zone: 'z' }], idOf(9), operation)).toBeUndefined();
    expect(await reserver.reserve([{ zone: 'z' }], idOf(10), operation)).toBeUndefined();
    expect(refusing.asks).toEqual([idOf(0), idOf(9)]);
  });

  it('asks the other replicas of the account while one is skipped', async () => {
    const refusing = await replica(403);
    const other = await replica();
    const clock = new ManualClock(1_000_000);
    const reserver = new Reserver({ replicas: { addresses: async () => [refusing.address, other.address] }, secret: SECRET, clock, tell: () => undefined });
    reservers.push(reserver);
    for (let i = 0; i < 40; i++) await reserver.reserve([{ zone: 'z' }], idOf(i), operation);
    expect(refusing.asks).toHaveLength(1);
    expect(other.asks).toHaveLength(39);
  });

  it('spreads ids evenly and stays within the replicas', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) counts[spreadIndex(idOf(i), 3)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(spreadIndex('not-hex', 3)).toBe(0);
    expect(spreadIndex(idOf(1), 1)).toBe(0);
  });
});

describe('the reservation wait from the environment', () => {
  it('takes a whole number of milliseconds from 1 to 10,000, the default when unset, and refuses anything else by name', () => {
    expect(reserveWaitFromEnv({})).toBeUndefined();
    expect(reserveWaitFromEnv({ VENDOR_WAKE_RESERVE_WAIT_MS: '' })).toBeUndefined();
    expect(reserveWaitFromEnv({ VENDOR_WAKE_RESERVE_WAIT_MS: '1' })).toBe(1);
    expect(reserveWaitFromEnv({ VENDOR_WAKE_RESERVE_WAIT_MS: '10000' })).toBe(10_000);
    for (const bad of ['0', '10001', '50ms', '1.5', '-5', ' 50', '1e3']) {
      const err = refusal(() => reserveWaitFromEnv({ VENDOR_WAKE_RESERVE_WAIT_MS: bad }));
      expect(err.code).toBe('invalid_input');
      expect(err.message).toBe(`VENDOR_WAKE_RESERVE_WAIT_MS must be a whole number of milliseconds from 1 to 10000, not ${JSON.stringify(bad)}`);
    }
  });
});
