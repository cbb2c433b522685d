// Original file: shared/protocol/vendor/agent/v1/agent.proto


export interface CustomResourceDefinition {
  /**
   * `Kind.group`.
   */
  'kind'?: (string);
  /**
   * `Cluster` or `Namespaced`; empty means `Namespaced`.
   */
  'scope'?: (string);
}

export interface CustomResourceDefinition__Output {
  /**
   * `Kind.group`.
   */
  'kind': (string);
  /**
   * `Cluster` or `Namespaced`; empty means `Namespaced`.
   */
  'scope': (string);
}
