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
import { LIVE_ZONE_CACHE_MS } from './live-zones.ts';

const tables = useTestTables();
const accounts = ['a', 'b', 'c', 'd'].map((name) => ({ name, kubeconfigFile: `/k/${name}.yml` }));

/** Every command the app's table client sends from now on, by name. */
function noting(f: ApiFixture): string[] {
  const noted: string[] = [];
  f.table.client.middlewareStack.add(
    (next, context) => async (args) => {
      noted.push((context.commandName ?? '').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: `note-${Math.random()}` },
  );
  return noted;
}

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
    expect(noted.slice(0, 4)).toEqual(['BatchGetItem', 'Query', 'UpdateItem', 'BatchWriteItem']);

    noted.length = 0;
    await f.clock.advance(LIVE_ZONE_CACHE_MS - 1);
    expect((await activate(f, 'b')).status).toBe(200);
    expect(noted.slice(0, 3)).toEqual(['BatchGetItem', 'UpdateItem', 'BatchWriteItem']);
    expect(noted).not.toContain('Query');

    noted.length = 0;
    await f.clock.advance(1);
    expect((await activate(f, 'c')).status).toBe(200);
    expect(noted.slice(0, 4)).toEqual(['BatchGetItem', 'Query', 'UpdateItem', 'BatchWriteItem']);
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
