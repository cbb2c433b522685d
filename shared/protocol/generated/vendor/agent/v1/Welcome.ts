// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { SessionResume as _vendor_agent_v1_SessionResume, SessionResume__Output as _vendor_agent_v1_SessionResume__Output } from '../../../vendor/agent/v1/SessionResume.ts';

export interface Welcome {
  'sessionId'?: (string);
  'driverReplicaId'?: (string);
  /**
   * Protocol version the driver speaks on this stream.
   */
  'protocolVersion'?: (number);
  /**
   * How often the agent sends Heartbeat.
   */
  'heartbeatIntervalMs'?: (number);
  /**
   * The driver ends the session when it receives nothing from the agent for this long.
   */
  'leaseMs'?: (number);
  'resume'?: (_vendor_agent_v1_SessionResume | null);
}

export interface Welcome__Output {
  'sessionId': (string);
  'driverReplicaId': (string);
  /**
   * Protocol version the driver speaks on this stream.
   */
  'protocolVersion': (number);
  /**
   * How often the agent sends Heartbeat.
   */
  'heartbeatIntervalMs': (number);
  /**
   * The driver ends the session when it receives nothing from the agent for this long.
   */
  'leaseMs': (number);
  'resume': (_vendor_agent_v1_SessionResume__Output | null);
}
