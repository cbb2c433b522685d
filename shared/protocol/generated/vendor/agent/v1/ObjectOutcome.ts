// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from '../../../vendor/agent/v1/ObjectRef.ts';
import type { Long } from '@grpc/proto-loader';

export interface ObjectOutcome {
  /**
   * Position of the manifest or target in the request.
   */
  'index'?: (number);
  /**
   * The object as acted on (namespace after any override).
   */
  'object'?: (_vendor_agent_v1_ObjectRef | null);
  /**
   * `created`, `configured`, `deleted`, `absent`, `scaled`, `patched`, `restarted`, `rolledBack`,
   * `unchanged`, `failed` or `skipped`.
   */
  'result'?: (string);
  /**
   * For a failure, the API server's own message (its Status message); otherwise a short note.
   */
  'message'?: (string);
  /**
   * HTTP status of the API server's answer; 0 when there was none.
   */
  'code'?: (number);
  /**
   * The API server's Status reason (`Conflict`, `NotFound`, `Invalid`, ...).
   */
  'reason'?: (string);
  /**
   * resourceVersion and generation of the object after the change, when the server returned it.
   */
  'resourceVersion'?: (string);
  'generation'?: (number | string | Long);
}

export interface ObjectOutcome__Output {
  /**
   * Position of the manifest or target in the request.
   */
  'index': (number);
  /**
   * The object as acted on (namespace after any override).
   */
  'object': (_vendor_agent_v1_ObjectRef__Output | null);
  /**
   * `created`, `configured`, `deleted`, `absent`, `scaled`, `patched`, `restarted`, `rolledBack`,
   * `unchanged`, `failed` or `skipped`.
   */
  'result': (string);
  /**
   * For a failure, the API server's own message (its Status message); otherwise a short note.
   */
  'message': (string);
  /**
   * HTTP status of the API server's answer; 0 when there was none.
   */
  'code': (number);
  /**
   * The API server's Status reason (`Conflict`, `NotFound`, `Invalid`, ...).
   */
  'reason': (string);
  /**
   * resourceVersion and generation of the object after the change, when the server returned it.
   */
  'resourceVersion': (string);
  'generation': (number);
}
