/**
 * The operation as the API serves it: the error code of a failure of the operation as a whole is
 * served when the operation has one, and the schema the OpenAPI document is made from says so.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../shared/errors.ts';
import type { OperationRecord } from '../../shared/operations/model.ts';
import { jsonSchemaOf } from '../openapi/describe.ts';
import { operationViewSchema } from '../../shared/answers/operations.ts';
import { toOperationView } from './view.ts';

const record = (over: Partial<OperationRecord> = {}): OperationRecord => ({
  id: 'a1'.repeat(16),
  account: 'prod',
  action: 'scale',
  state: 'FAILED',
  attempt: 1,
  objects: 1,
  idempotencyKey: 'k1',
  requestHash: 'h'.repeat(64),
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_020,
  finishedAt: 1_700_000_000_020,
  dispatch: { agentId: 'a1', sessionId: 's1', replicaId: 'r1', at: 1_700_000_000_005 },
  message: 'invalid_input: the operation is invalid: scale.replicas: must be at most 1000000',
  outcomes: [],
  ...over,
});

describe('the operation view', () => {
  it('carries the error code of an operation that failed as a whole, and one the schema takes', () => {
    for (const code of ['invalid_input', 'timeout', 'internal'] as const) {
      const view = toOperationView(record({ errorCode: code }));
      expect(view).toMatchObject({ state: 'FAILED', errorCode: code, message: record().message });
      expect(v.parse(operationViewSchema, view)).toEqual(view);
    }
  });

  it('has no error code where the operation has none: open, succeeded, or failed for its outcomes', () => {
    const failedObjects = record({ message: '1 of 1 failed, 0 skipped: conflict', outcomes: [{ index: 0, apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', result: 'failed', code: 409 }] });
    for (const op of [record({ state: 'RUNNING', message: undefined, finishedAt: undefined }), record({ state: 'SUCCEEDED', message: '1 object done' }), failedObjects]) {
      const view = toOperationView(op);
      expect(view, op.state).not.toHaveProperty('errorCode');
      expect(v.parse(operationViewSchema, view)).toEqual(view);
    }
  });

  it('is described with the error code as one of the project codes, optional, with what it means', () => {
    const schema = jsonSchemaOf(operationViewSchema, 'output') as { properties: Record<string, { enum?: unknown[]; description?: string }>; required: string[] };
    expect(schema.properties.errorCode?.enum).toEqual([...ERROR_CODES]);
    expect(schema.properties.errorCode?.description).toMatch(/^The stable code of a failure of the operation as a whole/);
    expect(schema.required).not.toContain('errorCode');
    expect(v.safeParse(operationViewSchema, { ...toOperationView(record()), errorCode: 'not_a_code' }).success).toBe(false);
  });
});
