// Original file: shared/protocol/vendor/agent/v1/agent.proto


export interface ResourceChange {
  'group'?: (string);
  'kind'?: (string);
  /**
   * The object's namespace; empty for cluster-scoped objects.
   */
  'namespace'?: (string);
  'name'?: (string);
  'resourceVersion'?: (string);
  'deleted'?: (boolean);
  /**
   * The compact form as JSON text; empty for a deletion.
   */
  'object'?: (string);
}

export interface ResourceChange__Output {
  'group': (string);
  'kind': (string);
  /**
   * The object's namespace; empty for cluster-scoped objects.
   */
  'namespace': (string);
  'name': (string);
  'resourceVersion': (string);
  'deleted': (boolean);
  /**
   * The compact form as JSON text; empty for a deletion.
   */
  'object': (string);
}
