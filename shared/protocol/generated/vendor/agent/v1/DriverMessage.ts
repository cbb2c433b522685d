// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Welcome as _vendor_agent_v1_Welcome, Welcome__Output as _vendor_agent_v1_Welcome__Output } from '../../../vendor/agent/v1/Welcome.ts';
import type { HeartbeatAck as _vendor_agent_v1_HeartbeatAck, HeartbeatAck__Output as _vendor_agent_v1_HeartbeatAck__Output } from '../../../vendor/agent/v1/HeartbeatAck.ts';
import type { Ack as _vendor_agent_v1_Ack, Ack__Output as _vendor_agent_v1_Ack__Output } from '../../../vendor/agent/v1/Ack.ts';
import type { AssignAccount as _vendor_agent_v1_AssignAccount, AssignAccount__Output as _vendor_agent_v1_AssignAccount__Output } from '../../../vendor/agent/v1/AssignAccount.ts';
import type { RemoveAccount as _vendor_agent_v1_RemoveAccount, RemoveAccount__Output as _vendor_agent_v1_RemoveAccount__Output } from '../../../vendor/agent/v1/RemoveAccount.ts';
import type { ResumeInfo as _vendor_agent_v1_ResumeInfo, ResumeInfo__Output as _vendor_agent_v1_ResumeInfo__Output } from '../../../vendor/agent/v1/ResumeInfo.ts';
import type { Operation as _vendor_agent_v1_Operation, Operation__Output as _vendor_agent_v1_Operation__Output } from '../../../vendor/agent/v1/Operation.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * Envelope of every message from the driver to an agent.
 */
export interface DriverMessage {
  /**
   * Position in the driver's reliable sequence on this stream (assign, remove, operation); 0 otherwise.
   */
  'seq'?: (number | string | Long);
  /**
   * Cumulative acknowledgement: the highest agent seq the driver has processed on this stream.
   */
  'ackSeq'?: (number | string | Long);
  /**
   * Agent seqs above ack_seq that the driver has processed ahead of an earlier one (messages of one
   * account do not wait for another account's): each listed once on the stream, at most 256 per
   * message. An agent that does not read this field waits for ack_seq to cover them.
   */
  'ackedAhead'?: (number | string | Long)[];
  'welcome'?: (_vendor_agent_v1_Welcome | null);
  'heartbeatAck'?: (_vendor_agent_v1_HeartbeatAck | null);
  'ack'?: (_vendor_agent_v1_Ack | null);
  'assignAccount'?: (_vendor_agent_v1_AssignAccount | null);
  'removeAccount'?: (_vendor_agent_v1_RemoveAccount | null);
  'resumeInfo'?: (_vendor_agent_v1_ResumeInfo | null);
  'operation'?: (_vendor_agent_v1_Operation | null);
  'body'?: "welcome"|"heartbeatAck"|"ack"|"assignAccount"|"removeAccount"|"resumeInfo"|"operation";
}

/**
 * Envelope of every message from the driver to an agent.
 */
export interface DriverMessage__Output {
  /**
   * Position in the driver's reliable sequence on this stream (assign, remove, operation); 0 otherwise.
   */
  'seq': (number);
  /**
   * Cumulative acknowledgement: the highest agent seq the driver has processed on this stream.
   */
  'ackSeq': (number);
  /**
   * Agent seqs above ack_seq that the driver has processed ahead of an earlier one (messages of one
   * account do not wait for another account's): each listed once on the stream, at most 256 per
   * message. An agent that does not read this field waits for ack_seq to cover them.
   */
  'ackedAhead': (number)[];
  'welcome'?: (_vendor_agent_v1_Welcome__Output | null);
  'heartbeatAck'?: (_vendor_agent_v1_HeartbeatAck__Output | null);
  'ack'?: (_vendor_agent_v1_Ack__Output | null);
  'assignAccount'?: (_vendor_agent_v1_AssignAccount__Output | null);
  'removeAccount'?: (_vendor_agent_v1_RemoveAccount__Output | null);
  'resumeInfo'?: (_vendor_agent_v1_ResumeInfo__Output | null);
  'operation'?: (_vendor_agent_v1_Operation__Output | null);
  'body'?: "welcome"|"heartbeatAck"|"ack"|"assignAccount"|"removeAccount"|"resumeInfo"|"operation";
}
