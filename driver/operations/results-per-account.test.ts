import { describe, expect, it, vi } from 'vitest';
import { useAccountsWorld } from '../../test/support/accounts-world.ts';
import { KEYED_IN_FLIGHT } from '../agent-session.ts';
import { finished, getOperation, submitOperation } from '../../test/support/operations.ts';
import { troubledWorld } from '../../test/support/troubled-table.ts';

const world = useAccountsWorld();
const WAIT = { timeout: 60_000, interval: 50 };
const names = ['slow-acct', 'quick-acct'];
const deploy = (name: string) => ({ action: 'deploy', manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { v: '1' } }] });

describe("an agent's operation results, per account (docs/protocol.md, the driver's modules)", () => {
  it("record one account's result and take its cache data while another account's result waits for the table", async () => {
    const { troubled, agent } = await troubledWorld(world, names);

    // The driver's check that the stream may report for slow-acct reads its account item: held.
    troubled.state.trouble.add('slow-acct');
    const slow = await submitOperation(world.app, 'slow-acct', deploy('slow'));
    expect(slow.status).toBe(202);
    const slowId = slow.json.id as string;
    await vi.waitFor(() => expect(agent.operations.has(slowId)).toBe(true), WAIT);
    await vi.waitFor(() => expect(troubled.state.held).toBe(1), WAIT);

    // The result of quick-acct, sent after, is recorded meanwhile.
    const quick = await submitOperation(world.app, 'quick-acct', deploy('quick'));
    expect(quick.status).toBe(202);
    expect((await finished(world.app, quick.json.id as string, 60)).state).toBe('SUCCEEDED');
    expect((await getOperation(world.app, slowId)).state).not.toBe('SUCCEEDED');
    // And quick-acct's cache data is taken: it waits for its own account's results only.
    await agent.changes('quick-acct', [{ group: '', kind: 'ConfigMap', namespace: 'default', name: 'quick', resourceVersion: '1', deleted: false, object: '{"metadata":{"name":"quick","resourceVersion":"1"}}' }]);
    expect(troubled.state.held).toBe(1);

    troubled.release();
    expect((await finished(world.app, slowId, 60)).state).toBe('SUCCEEDED');
  }, 120_000);
  it('record results while more accounts than the running places wait out a throttled table', async () => {
    const throttled = Array.from({ length: KEYED_IN_FLIGHT + 8 }, (_, i) => `thr-${String(i).padStart(2, '0')}`);
    const { troubled, agent } = await troubledWorld(world, [...throttled, 'quick-acct']);
    troubled.state.throttled = true;
    troubled.release();
    for (const name of throttled) troubled.state.trouble.add(name);
    const ids: string[] = [];
    for (const name of throttled) {
      const posted = await submitOperation(world.app, name, deploy(name));
      expect(posted.status).toBe(202);
      ids.push(posted.json.id as string);
    }
    // Every result has been refused once by the throttled table: each waits out its backoff.
    await vi.waitFor(() => expect(ids.every((id) => agent.operations.has(id))).toBe(true), WAIT);
    await vi.waitFor(() => expect(troubled.state.refused).toBeGreaterThanOrEqual(throttled.length), WAIT);
    const quick = await submitOperation(world.app, 'quick-acct', deploy('quick'));
    expect((await finished(world.app, quick.json.id as string, 60)).state).toBe('SUCCEEDED');
    troubled.state.trouble.clear();
    for (const id of ids) expect((await finished(world.app, id, 60)).state).toBe('SUCCEEDED');
  }, 180_000);
});
