import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AccountSettings as _vendor_agent_v1_AccountSettings, AccountSettings__Output as _vendor_agent_v1_AccountSettings__Output } from './vendor/agent/v1/AccountSettings.ts';
import type { Ack as _vendor_agent_v1_Ack, Ack__Output as _vendor_agent_v1_Ack__Output } from './vendor/agent/v1/Ack.ts';
import type { AgentMessage as _vendor_agent_v1_AgentMessage, AgentMessage__Output as _vendor_agent_v1_AgentMessage__Output } from './vendor/agent/v1/AgentMessage.ts';
import type { AgentServiceClient as _vendor_agent_v1_AgentServiceClient, AgentServiceDefinition as _vendor_agent_v1_AgentServiceDefinition } from './vendor/agent/v1/AgentService.ts';
import type { AssignAccount as _vendor_agent_v1_AssignAccount, AssignAccount__Output as _vendor_agent_v1_AssignAccount__Output } from './vendor/agent/v1/AssignAccount.ts';
import type { AssignmentResult as _vendor_agent_v1_AssignmentResult, AssignmentResult__Output as _vendor_agent_v1_AssignmentResult__Output } from './vendor/agent/v1/AssignmentResult.ts';
import type { ClusterStatus as _vendor_agent_v1_ClusterStatus, ClusterStatus__Output as _vendor_agent_v1_ClusterStatus__Output } from './vendor/agent/v1/ClusterStatus.ts';
import type { ContainerUsage as _vendor_agent_v1_ContainerUsage, ContainerUsage__Output as _vendor_agent_v1_ContainerUsage__Output } from './vendor/agent/v1/ContainerUsage.ts';
import type { CustomResourceDefinition as _vendor_agent_v1_CustomResourceDefinition, CustomResourceDefinition__Output as _vendor_agent_v1_CustomResourceDefinition__Output } from './vendor/agent/v1/CustomResourceDefinition.ts';
import type { DeleteAction as _vendor_agent_v1_DeleteAction, DeleteAction__Output as _vendor_agent_v1_DeleteAction__Output } from './vendor/agent/v1/DeleteAction.ts';
import type { DeployAction as _vendor_agent_v1_DeployAction, DeployAction__Output as _vendor_agent_v1_DeployAction__Output } from './vendor/agent/v1/DeployAction.ts';
import type { DriverMessage as _vendor_agent_v1_DriverMessage, DriverMessage__Output as _vendor_agent_v1_DriverMessage__Output } from './vendor/agent/v1/DriverMessage.ts';
import type { Heartbeat as _vendor_agent_v1_Heartbeat, Heartbeat__Output as _vendor_agent_v1_Heartbeat__Output } from './vendor/agent/v1/Heartbeat.ts';
import type { HeartbeatAck as _vendor_agent_v1_HeartbeatAck, HeartbeatAck__Output as _vendor_agent_v1_HeartbeatAck__Output } from './vendor/agent/v1/HeartbeatAck.ts';
import type { HeldAccount as _vendor_agent_v1_HeldAccount, HeldAccount__Output as _vendor_agent_v1_HeldAccount__Output } from './vendor/agent/v1/HeldAccount.ts';
import type { Hello as _vendor_agent_v1_Hello, Hello__Output as _vendor_agent_v1_Hello__Output } from './vendor/agent/v1/Hello.ts';
import type { KindHealth as _vendor_agent_v1_KindHealth, KindHealth__Output as _vendor_agent_v1_KindHealth__Output } from './vendor/agent/v1/KindHealth.ts';
import type { ObjectOutcome as _vendor_agent_v1_ObjectOutcome, ObjectOutcome__Output as _vendor_agent_v1_ObjectOutcome__Output } from './vendor/agent/v1/ObjectOutcome.ts';
import type { ObjectRef as _vendor_agent_v1_ObjectRef, ObjectRef__Output as _vendor_agent_v1_ObjectRef__Output } from './vendor/agent/v1/ObjectRef.ts';
import type { Operation as _vendor_agent_v1_Operation, Operation__Output as _vendor_agent_v1_Operation__Output } from './vendor/agent/v1/Operation.ts';
import type { OperationResult as _vendor_agent_v1_OperationResult, OperationResult__Output as _vendor_agent_v1_OperationResult__Output } from './vendor/agent/v1/OperationResult.ts';
import type { PatchAction as _vendor_agent_v1_PatchAction, PatchAction__Output as _vendor_agent_v1_PatchAction__Output } from './vendor/agent/v1/PatchAction.ts';
import type { Permissions as _vendor_agent_v1_Permissions, Permissions__Output as _vendor_agent_v1_Permissions__Output } from './vendor/agent/v1/Permissions.ts';
import type { PodMetrics as _vendor_agent_v1_PodMetrics, PodMetrics__Output as _vendor_agent_v1_PodMetrics__Output } from './vendor/agent/v1/PodMetrics.ts';
import type { PodUsage as _vendor_agent_v1_PodUsage, PodUsage__Output as _vendor_agent_v1_PodUsage__Output } from './vendor/agent/v1/PodUsage.ts';
import type { RemoveAccount as _vendor_agent_v1_RemoveAccount, RemoveAccount__Output as _vendor_agent_v1_RemoveAccount__Output } from './vendor/agent/v1/RemoveAccount.ts';
import type { ResourceChange as _vendor_agent_v1_ResourceChange, ResourceChange__Output as _vendor_agent_v1_ResourceChange__Output } from './vendor/agent/v1/ResourceChange.ts';
import type { ResourceEvents as _vendor_agent_v1_ResourceEvents, ResourceEvents__Output as _vendor_agent_v1_ResourceEvents__Output } from './vendor/agent/v1/ResourceEvents.ts';
import type { ResourceScope as _vendor_agent_v1_ResourceScope, ResourceScope__Output as _vendor_agent_v1_ResourceScope__Output } from './vendor/agent/v1/ResourceScope.ts';
import type { ResumeInfo as _vendor_agent_v1_ResumeInfo, ResumeInfo__Output as _vendor_agent_v1_ResumeInfo__Output } from './vendor/agent/v1/ResumeInfo.ts';
import type { ResumeQuery as _vendor_agent_v1_ResumeQuery, ResumeQuery__Output as _vendor_agent_v1_ResumeQuery__Output } from './vendor/agent/v1/ResumeQuery.ts';
import type { RolloutRestartAction as _vendor_agent_v1_RolloutRestartAction, RolloutRestartAction__Output as _vendor_agent_v1_RolloutRestartAction__Output } from './vendor/agent/v1/RolloutRestartAction.ts';
import type { RolloutUndoAction as _vendor_agent_v1_RolloutUndoAction, RolloutUndoAction__Output as _vendor_agent_v1_RolloutUndoAction__Output } from './vendor/agent/v1/RolloutUndoAction.ts';
import type { ScaleAction as _vendor_agent_v1_ScaleAction, ScaleAction__Output as _vendor_agent_v1_ScaleAction__Output } from './vendor/agent/v1/ScaleAction.ts';
import type { ScopeProgress as _vendor_agent_v1_ScopeProgress, ScopeProgress__Output as _vendor_agent_v1_ScopeProgress__Output } from './vendor/agent/v1/ScopeProgress.ts';
import type { ScopeResume as _vendor_agent_v1_ScopeResume, ScopeResume__Output as _vendor_agent_v1_ScopeResume__Output } from './vendor/agent/v1/ScopeResume.ts';
import type { ScopeSet as _vendor_agent_v1_ScopeSet, ScopeSet__Output as _vendor_agent_v1_ScopeSet__Output } from './vendor/agent/v1/ScopeSet.ts';
import type { ScopeSync as _vendor_agent_v1_ScopeSync, ScopeSync__Output as _vendor_agent_v1_ScopeSync__Output } from './vendor/agent/v1/ScopeSync.ts';
import type { SessionResume as _vendor_agent_v1_SessionResume, SessionResume__Output as _vendor_agent_v1_SessionResume__Output } from './vendor/agent/v1/SessionResume.ts';
import type { StaticAccount as _vendor_agent_v1_StaticAccount, StaticAccount__Output as _vendor_agent_v1_StaticAccount__Output } from './vendor/agent/v1/StaticAccount.ts';
import type { Welcome as _vendor_agent_v1_Welcome, Welcome__Output as _vendor_agent_v1_Welcome__Output } from './vendor/agent/v1/Welcome.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  vendor: {
    agent: {
      v1: {
        AccountSettings: MessageTypeDefinition<_vendor_agent_v1_AccountSettings, _vendor_agent_v1_AccountSettings__Output>
        Ack: MessageTypeDefinition<_vendor_agent_v1_Ack, _vendor_agent_v1_Ack__Output>
        AgentMessage: MessageTypeDefinition<_vendor_agent_v1_AgentMessage, _vendor_agent_v1_AgentMessage__Output>
        AgentService: SubtypeConstructor<typeof grpc.Client, _vendor_agent_v1_AgentServiceClient> & { service: _vendor_agent_v1_AgentServiceDefinition }
        AssignAccount: MessageTypeDefinition<_vendor_agent_v1_AssignAccount, _vendor_agent_v1_AssignAccount__Output>
        AssignmentResult: MessageTypeDefinition<_vendor_agent_v1_AssignmentResult, _vendor_agent_v1_AssignmentResult__Output>
        ClusterStatus: MessageTypeDefinition<_vendor_agent_v1_ClusterStatus, _vendor_agent_v1_ClusterStatus__Output>
        ContainerUsage: MessageTypeDefinition<_vendor_agent_v1_ContainerUsage, _vendor_agent_v1_ContainerUsage__Output>
        CustomResourceDefinition: MessageTypeDefinition<_vendor_agent_v1_CustomResourceDefinition, _vendor_agent_v1_CustomResourceDefinition__Output>
        DeleteAction: MessageTypeDefinition<_vendor_agent_v1_DeleteAction, _vendor_agent_v1_DeleteAction__Output>
        DeployAction: MessageTypeDefinition<_vendor_agent_v1_DeployAction, _vendor_agent_v1_DeployAction__Output>
        DriverMessage: MessageTypeDefinition<_vendor_agent_v1_DriverMessage, _vendor_agent_v1_DriverMessage__Output>
        Heartbeat: MessageTypeDefinition<_vendor_agent_v1_Heartbeat, _vendor_agent_v1_Heartbeat__Output>
        HeartbeatAck: MessageTypeDefinition<_vendor_agent_v1_HeartbeatAck, _vendor_agent_v1_HeartbeatAck__Output>
        HeldAccount: MessageTypeDefinition<_vendor_agent_v1_HeldAccount, _vendor_agent_v1_HeldAccount__Output>
        Hello: MessageTypeDefinition<_vendor_agent_v1_Hello, _vendor_agent_v1_Hello__Output>
        KindHealth: MessageTypeDefinition<_vendor_agent_v1_KindHealth, _vendor_agent_v1_KindHealth__Output>
        ObjectOutcome: MessageTypeDefinition<_vendor_agent_v1_ObjectOutcome, _vendor_agent_v1_ObjectOutcome__Output>
        ObjectRef: MessageTypeDefinition<_vendor_agent_v1_ObjectRef, _vendor_agent_v1_ObjectRef__Output>
        Operation: MessageTypeDefinition<_vendor_agent_v1_Operation, _vendor_agent_v1_Operation__Output>
        OperationResult: MessageTypeDefinition<_vendor_agent_v1_OperationResult, _vendor_agent_v1_OperationResult__Output>
        PatchAction: MessageTypeDefinition<_vendor_agent_v1_PatchAction, _vendor_agent_v1_PatchAction__Output>
        Permissions: MessageTypeDefinition<_vendor_agent_v1_Permissions, _vendor_agent_v1_Permissions__Output>
        PodMetrics: MessageTypeDefinition<_vendor_agent_v1_PodMetrics, _vendor_agent_v1_PodMetrics__Output>
        PodUsage: MessageTypeDefinition<_vendor_agent_v1_PodUsage, _vendor_agent_v1_PodUsage__Output>
        RemoveAccount: MessageTypeDefinition<_vendor_agent_v1_RemoveAccount, _vendor_agent_v1_RemoveAccount__Output>
        ResourceChange: MessageTypeDefinition<_vendor_agent_v1_ResourceChange, _vendor_agent_v1_ResourceChange__Output>
        ResourceEvents: MessageTypeDefinition<_vendor_agent_v1_ResourceEvents, _vendor_agent_v1_ResourceEvents__Output>
        ResourceScope: MessageTypeDefinition<_vendor_agent_v1_ResourceScope, _vendor_agent_v1_ResourceScope__Output>
        ResumeInfo: MessageTypeDefinition<_vendor_agent_v1_ResumeInfo, _vendor_agent_v1_ResumeInfo__Output>
        ResumeQuery: MessageTypeDefinition<_vendor_agent_v1_ResumeQuery, _vendor_agent_v1_ResumeQuery__Output>
        RolloutRestartAction: MessageTypeDefinition<_vendor_agent_v1_RolloutRestartAction, _vendor_agent_v1_RolloutRestartAction__Output>
        RolloutUndoAction: MessageTypeDefinition<_vendor_agent_v1_RolloutUndoAction, _vendor_agent_v1_RolloutUndoAction__Output>
        ScaleAction: MessageTypeDefinition<_vendor_agent_v1_ScaleAction, _vendor_agent_v1_ScaleAction__Output>
        ScopeProgress: MessageTypeDefinition<_vendor_agent_v1_ScopeProgress, _vendor_agent_v1_ScopeProgress__Output>
        ScopeResume: MessageTypeDefinition<_vendor_agent_v1_ScopeResume, _vendor_agent_v1_ScopeResume__Output>
        ScopeSet: MessageTypeDefinition<_vendor_agent_v1_ScopeSet, _vendor_agent_v1_ScopeSet__Output>
        ScopeSync: MessageTypeDefinition<_vendor_agent_v1_ScopeSync, _vendor_agent_v1_ScopeSync__Output>
        SessionResume: MessageTypeDefinition<_vendor_agent_v1_SessionResume, _vendor_agent_v1_SessionResume__Output>
        StaticAccount: MessageTypeDefinition<_vendor_agent_v1_StaticAccount, _vendor_agent_v1_StaticAccount__Output>
        Welcome: MessageTypeDefinition<_vendor_agent_v1_Welcome, _vendor_agent_v1_Welcome__Output>
      }
    }
  }
}

