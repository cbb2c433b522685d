// Original file: shared/protocol/vendor/agent/v1/agent.proto

import type { CustomResourceDefinition as _vendor_agent_v1_CustomResourceDefinition, CustomResourceDefinition__Output as _vendor_agent_v1_CustomResourceDefinition__Output } from '../../../vendor/agent/v1/CustomResourceDefinition.ts';
import type { Permissions as _vendor_agent_v1_Permissions, Permissions__Output as _vendor_agent_v1_Permissions__Output } from '../../../vendor/agent/v1/Permissions.ts';
import type { Long } from '@grpc/proto-loader';

/**
 * The non-secret per-account settings of vendor-agent.yml `kubernetes.accounts[]`.
 */
export interface AccountSettings {
  'context'?: (string);
  'serviceAccount'?: (boolean);
  'insecure'?: (boolean);
  'noProxy'?: (boolean);
  'oAuthScopes'?: (string)[];
  'namespaces'?: (string)[];
  'omitNamespaces'?: (string)[];
  'onlyNamespacedResources'?: (boolean);
  'customResourceDefinitions'?: (_vendor_agent_v1_CustomResourceDefinition)[];
  'kinds'?: (string)[];
  'omitKinds'?: (string)[];
  'metrics'?: (boolean);
  /**
   * 0 means the agent's default (300000); the settings themselves refuse 0 (at least 1).
   */
  'maxResumableResourceAgeMs'?: (number | string | Long);
  'permissions'?: (_vendor_agent_v1_Permissions | null);
  /**
   * With namespaces listed, the cluster-scoped kinds operations may still act on: `Kind` for a core
   * kind, `Kind.group` otherwise. Every other cluster-scoped kind is refused.
   */
  'clusterScopedKinds'?: (string)[];
  /**
   * `onlySpinnakerManaged`: cache only the objects carrying the label deploy puts on what it applies
   * (docs/cache.md#what-is-cached).
   */
  'onlySpinnakerManaged'?: (boolean);
}

/**
 * The non-secret per-account settings of vendor-agent.yml `kubernetes.accounts[]`.
 */
export interface AccountSettings__Output {
  'context': (string);
  'serviceAccount': (boolean);
  'insecure': (boolean);
  'noProxy': (boolean);
  'oAuthScopes': (string)[];
  'namespaces': (string)[];
  'omitNamespaces': (string)[];
  'onlyNamespacedResources': (boolean);
  'customResourceDefinitions': (_vendor_agent_v1_CustomResourceDefinition__Output)[];
  'kinds': (string)[];
  'omitKinds': (string)[];
  'metrics': (boolean);
  /**
   * 0 means the agent's default (300000); the settings themselves refuse 0 (at least 1).
   */
  'maxResumableResourceAgeMs': (number);
  'permissions': (_vendor_agent_v1_Permissions__Output | null);
  /**
   * With namespaces listed, the cluster-scoped kinds operations may still act on: `Kind` for a core
   * kind, `Kind.group` otherwise. Every other cluster-scoped kind is refused.
   */
  'clusterScopedKinds': (string)[];
  /**
   * `onlySpinnakerManaged`: cache only the objects carrying the label deploy puts on what it applies
   * (docs/cache.md#what-is-cached).
   */
  'onlySpinnakerManaged': (boolean);
}
