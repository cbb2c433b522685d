import { describe, expect, it } from 'vitest';
import { refusal } from '../../test/refusal.ts';
import { agentProtocol } from './loader.ts';
import type { AgentMessage, DriverMessage } from './messages.ts';
import { parseAgentMessage, parseDriverMessage } from './validate.ts';

const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
// Round-trip through the real codec so the validator sees what the wire produces.
const fromAgent = (m: AgentMessage) => parseAgentMessage(connect.requestDeserialize(connect.requestSerialize(m)));
const fromDriver = (m: DriverMessage) =>
  parseDriverMessage(connect.responseDeserialize(connect.responseSerialize(m)));

const hello = { protocolVersion: 1, agentId: 'agent-1', zone: 'vendor-agent_infra' };

describe('parseAgentMessage', () => {
  it('turns a valid hello into an envelope naming its body', () => {
    const env = fromAgent({ hello: { ...hello, staticAccounts: [{ name: 'prod' }] } });
    expect(env.kind).toBe('hello');
    if (env.kind !== 'hello') return;
    expect(env.body.agentId).toBe('agent-1');
    expect(env.body.staticAccounts.map((a) => a.name)).toEqual(['prod']);
    expect(env.seq).toBe(0);
  });

  it('refuses a message without a body', () => {
    const err = refusal(() => fromAgent({ seq: 0 }));
    expect(err.code).toBe('protocol_error');
    expect(err.details['problem']).toBe('malformed');
    expect(err.message).toBe('message has no body');
  });

  it('refuses a number no JavaScript number holds exactly, naming where it is', () => {
    const err = refusal(() =>
      fromAgent({
        seq: 1,
        operationResult: { operationId: 'op', account: 'prod', attempt: 1, outcomes: [{ result: 'scaled', generation: '18446744073709551615' }] },
      }),
    );
    expect(err.details['problem']).toBe('malformed');
    expect(err.message).toBe('malformed operationResult: operationResult.outcomes.0.generation is larger than 2^53 - 1');
    expect(fromAgent({ seq: 1, operationResult: { operationId: 'op', account: 'prod', attempt: 1, startedAtMs: Number.MAX_SAFE_INTEGER } }).kind).toBe('operationResult');
  });

  it('names each bad field of a body', () => {
    const err = refusal(() =>
      fromAgent({ hello: { ...hello, agentId: '', staticAccounts: [{ name: 'a' }, { name: 'a' }] } }),
    );
    expect(err.details['problem']).toBe('malformed');
    expect(err.issues.map((i) => i.path)).toEqual(['hello.agentId', 'hello.staticAccounts']);
    expect(err.message).toContain('hello.agentId is required');
    expect(err.message).toContain('names an account twice');
  });

  it('requires a sequence number on reliable messages and refuses one elsewhere', () => {
    const result = { account: 'prod', generation: 1, ok: true };
    expect(fromAgent({ seq: 1, assignmentResult: result }).kind).toBe('assignmentResult');
    expect(refusal(() => fromAgent({ assignmentResult: result })).message).toBe(
      'assignmentResult must carry a sequence number',
    );
    expect(refusal(() => fromAgent({ seq: 4, heartbeat: { id: 1 } })).message).toBe(
      'heartbeat must not carry a sequence number',
    );
  });

  it('refuses a result with generation 0', () => {
    const err = refusal(() => fromAgent({ seq: 1, assignmentResult: { account: 'prod', generation: 0 } }));
    expect(err.issues).toEqual([{ path: 'assignmentResult.generation', message: 'must be at least 1' }]);
  });
});

describe('parseDriverMessage', () => {
  it('accepts a welcome and refuses one whose lease is not longer than the heartbeat', () => {
    const welcome = { sessionId: 's', driverReplicaId: 'r', protocolVersion: 1, heartbeatIntervalMs: 10, leaseMs: 30 };
    expect(fromDriver({ welcome }).kind).toBe('welcome');
    const err = refusal(() => fromDriver({ welcome: { ...welcome, leaseMs: 10 } }));
    expect(err.message).toContain('leaseMs must be longer than heartbeatIntervalMs');
  });

  it('accepts an assignment and refuses one without an account', () => {
    expect(fromDriver({ seq: 1, assignAccount: { account: 'prod', generation: 3 } }).kind).toBe('assignAccount');
    const err = refusal(() => fromDriver({ seq: 1, assignAccount: { generation: 3 } }));
    expect(err.issues[0]?.path).toBe('assignAccount.account');
  });
});

describe('operations', () => {
  const operation = { operationId: 'op-1', account: 'prod', attempt: 1, deploy: { manifests: ['{}'] } };

  it('passes an operation on whatever its fields hold: the agent refuses a bad one as that operation alone', () => {
    const env = fromDriver({ seq: 1, operation });
    expect(env.kind).toBe('operation');
    if (env.kind !== 'operation') return;
    expect(env.body.action).toBe('deploy');
    // No action, attempt 0, a time-out past 2^53 - 1: none of them is the stream's problem.
    const odd = fromDriver({ seq: 1, operation: { operationId: 'op-1', account: 'prod', attempt: 0, timeoutMs: Number.MAX_VALUE } });
    expect(odd).toMatchObject({ kind: 'operation', body: { attempt: 0, timeoutMs: 18446744073709552000 } });
    expect(odd.body).not.toHaveProperty('action', expect.anything());
    // Every other body is still held to 2^53 - 1.
    expect(refusal(() => fromDriver({ seq: 1, assignAccount: { account: 'prod', generation: Number.MAX_VALUE } })).message).toBe(
      'malformed assignAccount: assignAccount.generation is larger than 2^53 - 1',
    );
  });

  it('accepts a result with outcomes and refuses one with an unnamed outcome', () => {
    const result = { operationId: 'op-1', account: 'prod', attempt: 1, ok: true, outcomes: [{ index: 0, result: 'created' }] };
    expect(fromAgent({ seq: 1, operationResult: result }).kind).toBe('operationResult');
    const err = refusal(() => fromAgent({ seq: 1, operationResult: { ...result, outcomes: [{ index: 0 }] } }));
    expect(err.issues[0]?.path).toBe('operationResult.outcomes.0.result');
  });
});
