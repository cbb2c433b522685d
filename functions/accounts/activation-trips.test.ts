/**
 * The API's table round trips for one PATCH to ACTIVE (docs/api.md, PATCH; docs/benchmarks.md#assignment-npm-run-benchassign):
 * the consistent read of the batch, the read of the zone's live sessions, the conditional write and
 * the feed entry before the answer, then the facet index. A zone found live is taken as live for a
 * moment (functions/accounts/live-zones.ts) while a lease read then still runs; a zone found without
 * a live session is read again every time. Real app, real dynalite.
 */
import { describe, expect, it } from 'vitest';
import { apiFixture, type ApiFixture } from '../../test/support/api.ts';
import { useTestTables } from '../../test/support/table.ts';
import { endSession, putSession } from '../../shared/table/agents/sessions.ts';
import { changesSince, cursorAt } from '../../shared/table/accounts/feed.ts';
import { getAccount, updateAccount } from '../../shared/table/accounts/records.ts';
import { LIVE_ZONE_CACHE_MS } from './live-zones.ts';

const tables = useTestTables();
const accounts = ['a', 'b', 'c', 'd'].map((name) => ({ name, kubeconfigFile: `/k/${name}.yml` }));

/** Every command the app's table client sends from now on, by name; with `ends`, when each is answered (`<name`) too. */
function noting(f: ApiFixture, ends?: string[]): string[] {
  const noted: string[] = [];
  f.table.client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = (context.commandName ?? '').replace(/Command$/, '');
      noted.push(name);
      ends?.push(`>${name}`);
      try {
        return await next(args);
      } finally {
        ends?.push(`<${name}`);
      }
    },
    { step: 'initialize', name: `note-${Math.random()}` },
  );
  return noted;
}

/** The writes among `noted`, in the order they were sent. */
const writes = (noted: readonly string[]) => noted.filter((c) => c === 'UpdateItem' || c === 'BatchWriteItem');

async function registered(): Promise<ApiFixture> {
  const f = await apiFixture(tables, accounts);
  await f.call('POST', '/vendor/accounts', accounts.map((a) => ({ name: a.name, zoneId: 'z1' })));
  return f;
}

const activate = (f: ApiFixture, name: string) => f.call('PATCH', '/vendor/accounts', [{ name, state: 'ACTIVE' }]);

describe('the API\'s round trips of one activation', () => {
  it('reads the account and the zone\'s sessions, writes the account and its feed entry; a second activation within the moment reads no sessions', async () => {
    const f = await registered();
    await f.connectAgent('agent-1', 'z1');
    const noted = noting(f);

    expect((await activate(f, 'a')).status).toBe(200);
    // Then the facet index follows (docs/table.md#the-facet-index): after the feed entry, off the replicas' path.
    expect(noted.slice(0, 2)).toEqual(['BatchGetItem', 'Query']);
    expect(writes(noted.slice(2, 4)).sort()).toEqual(['BatchWriteItem', 'UpdateItem']);

    noted.length = 0;
    await f.clock.advance(LIVE_ZONE_CACHE_MS - 1);
    expect((await activate(f, 'b')).status).toBe(200);
    expect(noted[0]).toBe('BatchGetItem');
    expect(writes(noted.slice(1, 3)).sort()).toEqual(['BatchWriteItem', 'UpdateItem']);
    expect(noted).not.toContain('Query');

    noted.length = 0;
    await f.clock.advance(1);
    expect((await activate(f, 'c')).status).toBe(200);
    expect(noted.slice(0, 2)).toEqual(['BatchGetItem', 'Query']);
  });

  it('sends the feed entry alongside the account write, not after its answer, at the generation the write gives', async () => {
    const f = await registered();
    await f.connectAgent('agent-1', 'z1');
    const events: string[] = [];
    noting(f, events);
    expect((await activate(f, 'a')).status).toBe(200);
    // Both writes are on their way before either is answered: one round trip before the wake, not two.
    const firstAnswer = events.findIndex((e) => e === '<UpdateItem' || e === '<BatchWriteItem');
    expect(events.slice(0, firstAnswer).filter((e) => e === '>UpdateItem' || e === '>BatchWriteItem').sort()).toEqual(['>BatchWriteItem', '>UpdateItem']);
    const entries = (await changesSince(f.table, cursorAt(0), 100)).changes.map((c) => [c.action, c.name, c.generation]);
    expect(entries).toEqual([['assign', 'a', 2]]);
    expect((await f.call('GET', '/vendor/accounts/a')).json).toMatchObject({ state: 'ACTIVE' });
  });

  it('a write whose condition fails (another writer got there first) gives the right error and changes nothing more', async () => {
    const f = await registered();
    await f.connectAgent('agent-1', 'z1');
    let raced = false;
    f.table.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && !raced) {
          raced = true;
          // Between the PATCH's read and its write, the account is activated by someone else.
          const current = await getAccount(f.table, 'a', { consistent: true });
          if (current === undefined) throw new Error('no account');
          await updateAccount(f.table, 'a', current.version, { state: 'ACTIVE', generation: current.generation + 1 }, f.clock.now());
        }
        return next(args);
      },
      { step: 'initialize', name: 'race' },
    );
    const res = await activate(f, 'a');
    expect(res.status).toBe(409);
    expect(res.json.detail).toBe('account "a" is already ACTIVE');
    const after = await getAccount(f.table, 'a', { consistent: true });
    // The other writer's write, and nothing of the refused PATCH.
    expect(after).toMatchObject({ state: 'ACTIVE', generation: 2 });
    expect(after?.registration?.zoneId).toBe('z1');
  });

  it('a batch larger than one entry write appends each group\'s entries after its writes', async () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ name: `m${String(i).padStart(2, '0')}`, kubeconfigFile: `/k/m${i}.yml` }));
    const f = await apiFixture(tables, many);
    await f.call('POST', '/vendor/accounts', many.map((a) => ({ name: a.name, zoneId: 'z1' })));
    await f.connectAgent('agent-1', 'z1');
    const events: string[] = [];
    noting(f, events);
    expect((await f.call('PATCH', '/vendor/accounts', many.map((a) => ({ name: a.name, state: 'ACTIVE' })))).status).toBe(200);
    // The first entry write starts once 25 account writes have been answered.
    const firstEntries = events.indexOf('>BatchWriteItem');
    expect(events.slice(0, firstEntries).filter((e) => e === '<UpdateItem')).toHaveLength(25);
    expect((await changesSince(f.table, cursorAt(0), 100)).changes).toHaveLength(30);
  });

  it('a batch over several zones reads their sessions together: every read is sent before the first is answered', async () => {
    const f = await apiFixture(tables, accounts);
    const zones = ['z1', 'z2', 'z3'];
    await f.call('POST', '/vendor/accounts', accounts.slice(0, 3).map((a, i) => ({ name: a.name, zoneId: zones[i] })));
    for (const zone of zones) await f.connectAgent(`agent-${zone}`, zone);
    const events: string[] = [];
    noting(f, events);
    expect((await f.call('PATCH', '/vendor/accounts', accounts.slice(0, 3).map((a) => ({ name: a.name, state: 'ACTIVE' })))).status).toBe(200);
    const reads = events.filter((e) => e.endsWith('Query'));
    expect(reads.slice(0, 4)).toEqual(['>Query', '>Query', '>Query', '<Query']);
  });

  it('reads again once every lease it saw has run out, and then refuses', async () => {
    const f = await registered();
    await putSession(f.table, { agentId: 'brief', zoneId: 'z1', replicaId: 'r', connectedAt: f.clock.now(), leaseExpiresAt: f.clock.now() + 500, agentVersion: '1', staticAccounts: [] });
    expect((await activate(f, 'a')).status).toBe(200);
    await f.clock.advance(500);
    const res = await activate(f, 'b');
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ code: 'conflict', zoneId: 'z1' });
  });

  it('an agent whose session ended stops counting once the moment is over', async () => {
    const f = await registered();
    await putSession(f.table, { agentId: 'gone', zoneId: 'z1', replicaId: 'r', sessionId: 's1', connectedAt: f.clock.now(), leaseExpiresAt: f.clock.now() + 60_000, agentVersion: '1', staticAccounts: [] });
    expect((await activate(f, 'a')).status).toBe(200);
    await endSession(f.table, 'z1', 'gone', 's1', f.clock.now(), 'test');
    await f.clock.advance(LIVE_ZONE_CACHE_MS);
    expect((await activate(f, 'b')).status).toBe(409);
  });

  it('keeps no zone found without a live session: an agent that connects is seen at once', async () => {
    const f = await registered();
    expect((await activate(f, 'a')).status).toBe(409);
    await f.connectAgent('agent-1', 'z1');
    expect((await activate(f, 'a')).status).toBe(200);
  });

  it('a write refused by its condition gives the right error and writes nothing, feed entry included', async () => {
    const f = await registered();
    await f.connectAgent('agent-1', 'z1');
    expect((await activate(f, 'a')).status).toBe(200);
    const noted = noting(f);
    const again = await activate(f, 'a');
    expect(again.status).toBe(409);
    expect(again.json.detail).toBe('account "a" is already ACTIVE');
    expect(noted.filter((c) => c === 'UpdateItem' || c === 'BatchWriteItem' || c === 'PutItem')).toEqual([]);
  });
});
