// Original file: shared/protocol/vendor/agent/v1/agent.proto


/**
 * One watch of the cache: a kind in one namespace, or in all namespaces (or cluster-scoped) when
 * `namespace` is empty. Synthetic scopes hold resources the agent does not watch (docs/cache.md#what-is-cached).
 */
export interface ResourceScope {
  /**
   * API group; empty for the core group.
   */
  'group'?: (string);
  'kind'?: (string);
  'namespace'?: (string);
  'synthetic'?: (boolean);
}

/**
 * One watch of the cache: a kind in one namespace, or in all namespaces (or cluster-scoped) when
 * `namespace` is empty. Synthetic scopes hold resources the agent does not watch (docs/cache.md#what-is-cached).
 */
export interface ResourceScope__Output {
  /**
   * API group; empty for the core group.
   */
  'group': (string);
  'kind': (string);
  'namespace': (string);
  'synthetic': (boolean);
}
