// Original file: shared/protocol/vendor/agent/v1/agent.proto


/**
 * A Kubernetes object by its identity.
 */
export interface ObjectRef {
  /**
   * `v1`, `apps/v1`, `example.com/v1alpha1`, ...
   */
  'apiVersion'?: (string);
  'kind'?: (string);
  /**
   * Empty for cluster-scoped kinds; for a namespaced kind, empty means `default`.
   */
  'namespace'?: (string);
  'name'?: (string);
}

/**
 * A Kubernetes object by its identity.
 */
export interface ObjectRef__Output {
  /**
   * `v1`, `apps/v1`, `example.com/v1alpha1`, ...
   */
  'apiVersion': (string);
  'kind': (string);
  /**
   * Empty for cluster-scoped kinds; for a namespaced kind, empty means `default`.
   */
  'namespace': (string);
  'name': (string);
}
