/**
 * Names for the generated protocol types, and the envelope shapes the code works with once a
 * message has passed validation. Every shape here is derived from the generated types, so the
 * `.proto` stays the one description of the messages.
 */
import type { AgentMessage, AgentMessage__Output } from './generated/vendor/agent/v1/AgentMessage.ts';
import type { DriverMessage, DriverMessage__Output } from './generated/vendor/agent/v1/DriverMessage.ts';

export type { AgentMessage, AgentMessage__Output } from './generated/vendor/agent/v1/AgentMessage.ts';
export type { DriverMessage, DriverMessage__Output } from './generated/vendor/agent/v1/DriverMessage.ts';
export type { AccountSettings, AccountSettings__Output } from './generated/vendor/agent/v1/AccountSettings.ts';
export type { AssignAccount, AssignAccount__Output } from './generated/vendor/agent/v1/AssignAccount.ts';
export type { AssignmentResult, AssignmentResult__Output } from './generated/vendor/agent/v1/AssignmentResult.ts';
export type { HeldAccount, HeldAccount__Output } from './generated/vendor/agent/v1/HeldAccount.ts';
export type { Hello, Hello__Output } from './generated/vendor/agent/v1/Hello.ts';
export type { RemoveAccount, RemoveAccount__Output } from './generated/vendor/agent/v1/RemoveAccount.ts';
export type { StaticAccount, StaticAccount__Output } from './generated/vendor/agent/v1/StaticAccount.ts';
export type { Welcome, Welcome__Output } from './generated/vendor/agent/v1/Welcome.ts';
export type { ResourceEvents, ResourceEvents__Output } from './generated/vendor/agent/v1/ResourceEvents.ts';
export type { ResourceChange, ResourceChange__Output } from './generated/vendor/agent/v1/ResourceChange.ts';
export type { ResourceScope, ResourceScope__Output } from './generated/vendor/agent/v1/ResourceScope.ts';
export type { ScopeSync, ScopeSync__Output } from './generated/vendor/agent/v1/ScopeSync.ts';
export type { ScopeProgress, ScopeProgress__Output } from './generated/vendor/agent/v1/ScopeProgress.ts';
export type { ScopeResume, ScopeResume__Output } from './generated/vendor/agent/v1/ScopeResume.ts';
export type { KindHealth, KindHealth__Output } from './generated/vendor/agent/v1/KindHealth.ts';
export type { ClusterStatus, ClusterStatus__Output } from './generated/vendor/agent/v1/ClusterStatus.ts';
export type { ResumeQuery, ResumeQuery__Output } from './generated/vendor/agent/v1/ResumeQuery.ts';
export type { ResumeInfo, ResumeInfo__Output } from './generated/vendor/agent/v1/ResumeInfo.ts';
export type { PodMetrics, PodMetrics__Output } from './generated/vendor/agent/v1/PodMetrics.ts';
export type { PodUsage, PodUsage__Output } from './generated/vendor/agent/v1/PodUsage.ts';
export type { ObjectOutcome, ObjectOutcome__Output } from './generated/vendor/agent/v1/ObjectOutcome.ts';
export type { ObjectRef, ObjectRef__Output } from './generated/vendor/agent/v1/ObjectRef.ts';
export type { Operation, Operation__Output } from './generated/vendor/agent/v1/Operation.ts';
export type { OperationResult, OperationResult__Output } from './generated/vendor/agent/v1/OperationResult.ts';
export type { AgentServiceClient, AgentServiceHandlers } from './generated/vendor/agent/v1/AgentService.ts';

/** The protocol version this code speaks (`vendor.agent.v1`). */
export const PROTOCOL_VERSION = 1;
/** Versions a driver accepts in Hello. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly number[] = [PROTOCOL_VERSION];

export const AGENT_SERVICE_NAME = 'vendor.agent.v1.AgentService';

export type AgentBodyKind = NonNullable<AgentMessage__Output['body']>;
export type DriverBodyKind = NonNullable<DriverMessage__Output['body']>;

/**
 * Messages that must not be lost: they carry a sequence number and stay in the sender's outbox
 * until the peer acknowledges them. Everything else is either answered at once (hello, heartbeat,
 * resume query), repeated by design (pod metrics every 20 s) or rebuilt from the table.
 */
export const RELIABLE_AGENT_BODIES: ReadonlySet<AgentBodyKind> = new Set<AgentBodyKind>([
  'assignmentResult',
  'resourceEvents',
  'operationResult',
]);
export const RELIABLE_DRIVER_BODIES: ReadonlySet<DriverBodyKind> = new Set<DriverBodyKind>([
  'assignAccount',
  'removeAccount',
  'operation',
]);

/** A received agent message after validation: exactly one body, named by `kind`. */
export type AgentEnvelope = {
  [K in AgentBodyKind]: { seq: number; ackSeq: number; kind: K; body: NonNullable<AgentMessage__Output[K]> };
}[AgentBodyKind];

/** A received driver message after validation. */
export type DriverEnvelope = {
  [K in DriverBodyKind]: { seq: number; ackSeq: number; ackedAhead: number[]; kind: K; body: NonNullable<DriverMessage__Output[K]> };
}[DriverBodyKind];

/** A body an agent sends; the connection adds `seq` and `ackSeq`. */
export type AgentBody = {
  [K in AgentBodyKind]: { kind: K; body: NonNullable<AgentMessage[K]> };
}[AgentBodyKind];

/** A body the driver sends; the session adds `seq`, `ackSeq` and `ackedAhead`. */
export type DriverBody = {
  [K in DriverBodyKind]: { kind: K; body: NonNullable<DriverMessage[K]> };
}[DriverBodyKind];

export function agentMessage(out: AgentBody, seq: number, ackSeq: number): AgentMessage {
  return { seq, ackSeq, [out.kind]: out.body };
}

export function driverMessage(out: DriverBody, seq: number, ackSeq: number, ackedAhead: number[] = []): DriverMessage {
  return { seq, ackSeq, ackedAhead, [out.kind]: out.body };
}
