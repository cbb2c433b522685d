// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { ContainerUsage as _vendor_agent_v1_ContainerUsage, ContainerUsage__Output as _vendor_agent_v1_ContainerUsage__Output } from '../../../vendor/agent/v1/ContainerUsage.ts';

export interface PodUsage {
  'namespace'?: (string);
  'name'?: (string);
  /**
   * When the metrics server sampled the pod (RFC 3339), and over which window (e.g. `30s`).
   */
  'timestamp'?: (string);
  'window'?: (string);
  'containers'?: (_vendor_agent_v1_ContainerUsage)[];
}

export interface PodUsage__Output {
  'namespace': (string);
  'name': (string);
  /**
   * When the metrics server sampled the pod (RFC 3339), and over which window (e.g. `30s`).
   */
  'timestamp': (string);
  'window': (string);
  'containers': (_vendor_agent_v1_ContainerUsage__Output)[];
}
