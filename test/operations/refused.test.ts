/**
 * An operation whose numbers the agent cannot run with is refused as that operation alone
 * (docs/operations.md#operations-the-agent-refuses): a real driver hands it to a real agent over
 * gRPC, the agent answers it failed with `invalid_input` naming the field (the code in the result's
 * `error_code` too, and on the operation's view as `errorCode`), the stream stays the same session,
 * and the next operation runs.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { driverLink } from '../../agent/connection/link.ts';
import type { DriverModuleFactory } from '../../driver/handlers.ts';
import { DRIVER_MODULES } from '../../driver/modules.ts';
import { operationsModule } from '../../driver/operations/module.ts';
import type { Driver } from '../../driver/server.ts';
import { requestHash } from '../../shared/operations/hash.ts';
import type { OperationAction } from '../../shared/operations/request.ts';
import type { Operation, OperationResult__Output } from '../../shared/protocol/messages.ts';
import { compress, createOperation } from '../../shared/table/operations/operations.ts';
import { WAIT, useAccountsWorld, type AccountsWorld, type TestAgent } from '../support/accounts-world.ts';
import { finished, run } from '../support/operations.ts';

const world = useAccountsWorld();

async function served(w: AccountsWorld, driverOptions: Parameters<AccountsWorld['driver']>[0] = {}) {
  await w.fresh([{ name: 'prod' }]);
  const driver = await w.driver(driverOptions);
  const agent = await w.agent('agent-a', { target: `127.0.0.1:${driver.port}` });
  await vi.waitFor(() => expect(driver.sessions()).toHaveLength(1), WAIT);
  await w.activate('prod');
  await vi.waitFor(async () => expect((await w.account('prod')).agents).toHaveLength(1), WAIT);
  return { driver, agent, session: stream(driver, agent) };
}

/** The stream between the two, as each end names it: the same pair throughout means it never ended. */
function stream(driver: Driver, agent: TestAgent): string[] {
  return [...driver.sessions().map((s) => s.id), driverLink(agent.running.ctx)?.connection.sessionId ?? 'none'];
}

const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data: { a: name } });
const web = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' };
const REFUSED = /^invalid_input: the operation is invalid: /;

/** Stores `request` as the API would, minus its checks, with `timeoutMs` on the record when given. */
async function stored(w: AccountsWorld, action: OperationAction, request: Record<string, unknown>, timeoutMs?: number): Promise<string> {
  const full = { action, ...request };
  const { record } = await createOperation(w.table, {
    account: 'prod',
    submittedBy: 'test:unchecked',
    idempotencyKey: randomUUID(),
    requestHash: requestHash('prod', full),
    request: compress(full),
    record: { action, objects: 1, ...(timeoutMs === undefined ? {} : { timeoutMs }) },
    now: Date.now(),
  });
  return record.id;
}

describe('an operation stored without the API’s checks, handed out by the driver', () => {
  it('is refused by the agent, recorded FAILED once, and the next operation runs on the same stream', async () => {
    const { driver, agent, session } = await served(world);
    world.kube.requests.clear();
    const cases: [string, Promise<string>][] = [
      // Past the API's bound, but a number the wire carries as it is.
      ['scale.replicas', stored(world, 'scale', { targets: [web], replicas: 2_000_000 })],
      // Thirty years: a time-out no driver may give.
      ['timeoutMs', stored(world, 'deploy', { manifests: [configMap('never')], forceConflicts: false }, 1e12)],
    ];
    const ids: string[] = [];
    for (const [field, stored] of cases) {
      const id = await stored;
      ids.push(id);
      const view = await finished(world.app, id);
      expect(view, field).toMatchObject({ state: 'FAILED', errorCode: 'invalid_input', attempts: 1, agentId: 'agent-a', outcomes: [] });
      expect(view.message, field).toMatch(REFUSED);
      expect(view.message, field).toMatch(new RegExp(`${field.replace('.', '\\.')}: must be at most \\d+$`));
    }
    // Nothing of them reached the cluster, nothing went out twice, and the stream never ended.
    expect(world.kube.requests.log().filter((r) => r.method !== 'GET')).toEqual([]);
    const handedOut = world.driverLogs.lines.filter((l) => l.msg === 'operation handed out' && ids.includes(l.operationId as string));
    expect(handedOut.map((l) => l.operationId).sort()).toEqual([...ids].sort());
    expect(agent.logs().filter((l) => String(l.msg).startsWith('operation refused: invalid_input: '))).toHaveLength(cases.length);
    expect(agent.logs().some((l) => String(l.msg).startsWith('driver broke the protocol'))).toBe(false);
    const after = await run(world.app, 'prod', { action: 'deploy', manifests: [configMap('after')] });
    expect(after.state).toBe('SUCCEEDED');
    expect(after).not.toHaveProperty('errorCode');
    expect(stream(driver, agent)).toEqual(session);
  });
});

describe('a stored request with a number the wire would change', () => {
  it('is not sent: the driver records it FAILED naming the field, the agent never sees it, and the next operation runs', async () => {
    const { driver, agent, session } = await served(world);
    world.kube.requests.clear();
    const cases: [string, string][] = [
      // The encoder would send 0: a scale to zero that nobody asked for, which the agent could not tell from one asked for.
      ['scale.replicas', await stored(world, 'scale', { targets: [web], replicas: 1e300 })],
      // -1 would arrive as 2^32 - 1, 1.5 as 1.
      ['scale.replicas', await stored(world, 'scale', { targets: [web], replicas: -1 })],
      ['scale.replicas', await stored(world, 'scale', { targets: [web], replicas: 1.5 })],
      // Past 2^53 - 1, a JavaScript number is no longer the revision stored.
      ['rolloutUndo.toRevision', await stored(world, 'rolloutUndo', { target: web, toRevision: 1e300 })],
    ];
    for (const [field, id] of cases) {
      const view = await finished(world.app, id);
      expect(view, field).toMatchObject({ state: 'FAILED', errorCode: 'invalid_input', outcomes: [] });
      expect(view.message, field).toMatch(new RegExp(`^the stored request cannot be sent: ${field.replace('.', '\\.')} is `));
    }
    const ids = cases.map(([, id]) => id);
    expect(world.driverLogs.lines.filter((l) => l.msg === 'operation handed out' && ids.includes(l.operationId as string))).toEqual([]);
    expect(agent.logs().filter((l) => ids.includes(l.operationId as string))).toEqual([]);
    expect(world.kube.requests.log().filter((r) => r.method !== 'GET')).toEqual([]);
    expect((await run(world.app, 'prod', { action: 'deploy', manifests: [configMap('after-unsent')] })).state).toBe('SUCCEEDED');
    expect(stream(driver, agent)).toEqual(session);
  });
});

/** Takes the operations module's place: records what the agent answers, and hands nothing out itself. */
function recordingResults(into: OperationResult__Output[]): DriverModuleFactory {
  return () => ({ name: 'operation-results', handlers: { operationResult: ({ body }) => void into.push(body) } });
}

describe('an operation message with numbers out of range, sent by the driver', () => {
  it('is answered as failed by field, or dropped when no result could name it; the stream stays and the next one runs', async () => {
    const results: OperationResult__Output[] = [];
    const { driver, agent, session } = await served(world, { base: DRIVER_MODULES.filter((m) => m !== operationsModule), modules: [recordingResults(results)] });
    const [driverSession] = driver.sessions();
    const send = (body: Operation) => driverSession!.send({ kind: 'operation', body });
    const op = (id: string, over: Partial<Operation>): Operation => ({ operationId: id, account: 'prod', attempt: 1, timeoutMs: 60_000, rolloutRestart: { targets: [web] }, ...over });

    const refused: [string, Operation][] = [
      // What 1e300, Infinity or -1 become in a 64-bit field.
      ['timeoutMs', op('bad-timeout-max', { timeoutMs: '18446744073709551615' })],
      ['timeoutMs', op('bad-timeout-unsafe', { timeoutMs: 2 ** 53 + 2 })],
      ['timeoutMs', op('bad-timeout-week', { timeoutMs: 7 * 86_400_000 + 1 })],
      ['scale.replicas', { ...op('bad-replicas', { scale: { targets: [web], replicas: 4294967295 } }), rolloutRestart: null }],
      ['rolloutUndo.toRevision', { ...op('bad-revision', { rolloutUndo: { target: web, toRevision: '18446744073709551615' } }), rolloutRestart: null }],
      // An action of a newer protocol arrives as none.
      ['action', { ...op('no-action', {}), rolloutRestart: null }],
    ];
    for (const [, body] of refused) await send(body);
    // Attempt 0 is no hand-out, and a result for it would be refused: it is dropped, and acknowledged.
    await send(op('attempt-zero', { attempt: 0 }));
    await send({ ...op('good', {}), rolloutRestart: null, deploy: { manifests: [JSON.stringify(configMap('good'))], namespace: '', forceConflicts: false } });

    await vi.waitFor(() => expect(results.map((r) => r.operationId).sort()).toEqual([...refused.map(([, b]) => b.operationId as string), 'good'].sort()), WAIT);
    for (const [field, body] of refused) {
      const result = results.find((r) => r.operationId === body.operationId);
      expect(result, body.operationId as string).toMatchObject({ ok: false, errorCode: 'invalid_input', attempt: 1, outcomes: [], budgetWaitMs: 0 });
      expect(result?.message, body.operationId as string).toMatch(REFUSED);
      expect(result?.message, body.operationId as string).toContain(`${field}: `);
    }
    expect(results.find((r) => r.operationId === 'good')).toMatchObject({ ok: true, errorCode: '', message: '1 object done' });
    expect(world.kube.store.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'good' })).toBeDefined();
    expect(agent.logs().some((l) => String(l.msg).startsWith('operation dropped: the operation is invalid: attempt: must be at least 1'))).toBe(true);
    expect(agent.logs().some((l) => String(l.msg).startsWith('driver broke the protocol'))).toBe(false);
    expect(stream(driver, agent)).toEqual(session);

    // Handed out again, a refused one is answered with the same result, and still the stream stays.
    const again = results.length;
    await send(refused[0]![1]);
    await vi.waitFor(() => expect(results).toHaveLength(again + 1), WAIT);
    expect(results.at(-1)).toEqual(results.find((r) => r.operationId === refused[0]![1].operationId));
    expect(stream(driver, agent)).toEqual(session);
  });
});
