// Original file: shared/protocol/vendor/agent/v1/agent.proto


/**
 * Server-side apply of manifests with the agent's field manager.
 */
export interface DeployAction {
  /**
   * Each manifest as a JSON object, in the order given.
   */
  'manifests'?: (string)[];
  /**
   * When set, every manifest of a namespaced kind is applied in this namespace.
   */
  'namespace'?: (string);
  /**
   * Take over fields another field manager owns instead of failing with a conflict.
   */
  'forceConflicts'?: (boolean);
}

/**
 * Server-side apply of manifests with the agent's field manager.
 */
export interface DeployAction__Output {
  /**
   * Each manifest as a JSON object, in the order given.
   */
  'manifests': (string)[];
  /**
   * When set, every manifest of a namespaced kind is applied in this namespace.
   */
  'namespace': (string);
  /**
   * Take over fields another field manager owns instead of failing with a conflict.
   */
  'forceConflicts': (boolean);
}
