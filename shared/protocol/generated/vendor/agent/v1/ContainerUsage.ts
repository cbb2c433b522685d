// Original file: shared/protocol/vendor/agent/v1/agent.proto


export interface ContainerUsage {
  'name'?: (string);
  /**
   * Kubernetes quantities as the metrics API gives them, e.g. `12m` and `34Mi`.
   */
  'cpu'?: (string);
  'memory'?: (string);
}

export interface ContainerUsage__Output {
  'name': (string);
  /**
   * Kubernetes quantities as the metrics API gives them, e.g. `12m` and `34Mi`.
   */
  'cpu': (string);
  'memory': (string);
}
