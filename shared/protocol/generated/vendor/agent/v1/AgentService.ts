// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AgentMessage as _vendor_agent_v1_AgentMessage, AgentMessage__Output as _vendor_agent_v1_AgentMessage__Output } from '../../../vendor/agent/v1/AgentMessage.ts';
import type { DriverMessage as _vendor_agent_v1_DriverMessage, DriverMessage__Output as _vendor_agent_v1_DriverMessage__Output } from '../../../vendor/agent/v1/DriverMessage.ts';

export interface AgentServiceClient extends grpc.Client {
  /**
   * The agent's only call. The first agent message is Hello, the driver answers Welcome, and the
   * stream then lives as long as the agent's session.
   */
  Connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_vendor_agent_v1_AgentMessage, _vendor_agent_v1_DriverMessage__Output>;
  Connect(options?: grpc.CallOptions): grpc.ClientDuplexStream<_vendor_agent_v1_AgentMessage, _vendor_agent_v1_DriverMessage__Output>;
  /**
   * The agent's only call. The first agent message is Hello, the driver answers Welcome, and the
   * stream then lives as long as the agent's session.
   */
  connect(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_vendor_agent_v1_AgentMessage, _vendor_agent_v1_DriverMessage__Output>;
  connect(options?: grpc.CallOptions): grpc.ClientDuplexStream<_vendor_agent_v1_AgentMessage, _vendor_agent_v1_DriverMessage__Output>;
  
}

export interface AgentServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The agent's only call. The first agent message is Hello, the driver answers Welcome, and the
   * stream then lives as long as the agent's session.
   */
  Connect: grpc.handleBidiStreamingCall<_vendor_agent_v1_AgentMessage__Output, _vendor_agent_v1_DriverMessage>;
  
}

export interface AgentServiceDefinition extends grpc.ServiceDefinition {
  Connect: MethodDefinition<_vendor_agent_v1_AgentMessage, _vendor_agent_v1_DriverMessage, _vendor_agent_v1_AgentMessage__Output, _vendor_agent_v1_DriverMessage__Output>
}
