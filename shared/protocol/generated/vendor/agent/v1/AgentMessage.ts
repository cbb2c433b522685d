// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { Hello as _vendor_agent_v1_Hello, Hello__Output as _vendor_agent_v1_Hello__Output } from '../../../vendor/agent/v1/Hello.ts';
import type { Heartbeat as _vendor_agent_v1_Heartbeat, Heartbeat__Output as _vendor_agent_v1_Heartbeat__Output } from '../../../vendor/agent/v1/Heartbeat.ts';
import type { Ack as _vendor_agent_v1_Ack, Ack__Output as _vendor_agent_v1_Ack__Output } from '../../../vendor/agent/v1/Ack.ts';
import type { AssignmentResult as _vendor_agent_v1_AssignmentResult, AssignmentResult__Output as _vendor_agent_v1_AssignmentResult__Output } from '../../../vendor/agent/v1/AssignmentResult.ts';
import type { ResourceEvents as _vendor_agent_v1_ResourceEvents, ResourceEvents__Output as _vendor_agent_v1_ResourceEvents__Output } from '../../../vendor/agent/v1/ResourceEvents.ts';
import type { ResumeQuery as _vendor_agent_v1_ResumeQuery, ResumeQuery__Output as _vendor_agent_v1_ResumeQuery__Output } from '../../../vendor/agent/v1/ResumeQuery.ts';
import type { OperationResult as _vendor_agent_v1_OperationResult, OperationResult__Output as _vendor_agent_v1_OperationResult__Output } from '../../../vendor/agent/v1/OperationResult.ts';
import type { PodMetrics as _vendor_agent_v1_PodMetrics, PodMetrics__Output as _vendor_agent_v1_PodMetrics__Output } from '../../../vendor/agent/v1/PodMetrics.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * Envelope of every message from an agent to the driver.
 */
export interface AgentMessage {
  /**
   * Position of this message in the sender's reliable sequence on this stream: 1, 2, 3, ... for
   * messages that must not be lost (assignment results, resource events, operation results);
   * 0 for every other message.
   */
  'seq'?: (number | string | Long);
  /**
   * Cumulative acknowledgement: the highest driver seq this agent has processed on this stream.
   */
  'ackSeq'?: (number | string | Long);
  'hello'?: (_vendor_agent_v1_Hello | null);
  'heartbeat'?: (_vendor_agent_v1_Heartbeat | null);
  'ack'?: (_vendor_agent_v1_Ack | null);
  'assignmentResult'?: (_vendor_agent_v1_AssignmentResult | null);
  'resourceEvents'?: (_vendor_agent_v1_ResourceEvents | null);
  'resumeQuery'?: (_vendor_agent_v1_ResumeQuery | null);
  'operationResult'?: (_vendor_agent_v1_OperationResult | null);
  'podMetrics'?: (_vendor_agent_v1_PodMetrics | null);
  'body'?: "hello"|"heartbeat"|"ack"|"assignmentResult"|"resourceEvents"|"resumeQuery"|"operationResult"|"podMetrics";
}

/**
 * Envelope of every message from an agent to the driver.
 */
export interface AgentMessage__Output {
  /**
   * Position of this message in the sender's reliable sequence on this stream: 1, 2, 3, ... for
   * messages that must not be lost (assignment results, resource events, operation results);
   * 0 for every other message.
   */
  'seq': (number);
  /**
   * Cumulative acknowledgement: the highest driver seq this agent has processed on this stream.
   */
  'ackSeq': (number);
  'hello'?: (_vendor_agent_v1_Hello__Output | null);
  'heartbeat'?: (_vendor_agent_v1_Heartbeat__Output | null);
  'ack'?: (_vendor_agent_v1_Ack__Output | null);
  'assignmentResult'?: (_vendor_agent_v1_AssignmentResult__Output | null);
  'resourceEvents'?: (_vendor_agent_v1_ResourceEvents__Output | null);
  'resumeQuery'?: (_vendor_agent_v1_ResumeQuery__Output | null);
  'operationResult'?: (_vendor_agent_v1_OperationResult__Output | null);
  'podMetrics'?: (_vendor_agent_v1_PodMetrics__Output | null);
  'body'?: "hello"|"heartbeat"|"ack"|"assignmentResult"|"resourceEvents"|"resumeQuery"|"operationResult"|"podMetrics";
}
