/**
 * What an account's settings allow operations to touch (docs/operations.md, "What is refused"). The
 * API applies these rules with what it knows without a cluster (`knownScope`), and refuses a request
 * before storing anything; the agent applies them again with the scope the cluster's discovery
 * reports, for kinds only the cluster knows. `kinds` and `omitKinds` limit caching only: operations
 * remain possible on every kind.
 */
import { crdKindName, groupKind, isBuiltInGroup, kindName, type KindScope } from './kinds.ts';

/** The per-account settings that restrict operations. */
export interface AccountRestrictions {
  namespaces?: readonly string[] | undefined;
  onlyNamespacedResources?: boolean | undefined;
  customResourceDefinitions?: readonly { kind: string; scope?: string | undefined }[] | undefined;
  /** Cluster-scoped kinds (`Kind`, `Kind.group`) an account limited to `namespaces` may still operate on. */
  clusterScopedKinds?: readonly string[] | undefined;
}

/** Where a namespaced object without a namespace goes (as with kubectl and a context without one). */
export const DEFAULT_NAMESPACE = 'default';

export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  /** The namespace it will be acted on in (after any override); empty or absent when none was given. */
  namespace?: string | undefined;
  name: string;
}

/**
 * Why `obj` may not be operated on for this account, or undefined when it may. `scope` is the kind's
 * scope when known; an unknown scope skips the checks that need it (the agent makes them later).
 */
export function restrictionProblem(account: AccountRestrictions, obj: ObjectIdentity, scope: KindScope | undefined): string | undefined {
  const custom = !isBuiltInGroup(obj.apiVersion);
  if (account.onlyNamespacedResources === true) {
    const crdName = crdKindName(obj.apiVersion, obj.kind);
    if (custom && !(account.customResourceDefinitions ?? []).some((c) => c.kind === crdName)) {
      return `${crdName} is a custom resource not listed in the account's customResourceDefinitions; with onlyNamespacedResources it cannot be deployed`;
    }
    if (!custom && scope === 'Cluster') {
      return `${obj.kind} is not namespaced; with onlyNamespacedResources the account deploys namespaced resources only`;
    }
  }
  const allowed = account.namespaces ?? [];
  if (allowed.length === 0) return undefined;
  if (groupKind(obj.apiVersion, obj.kind) === '/Namespace') {
    return allowed.includes(obj.name) ? undefined : outsideNamespaces(`namespace "${obj.name}"`, allowed);
  }
  if (scope === 'Cluster') {
    // An object outside every namespace reaches past the account's namespaces (a ClusterRoleBinding
    // grants rights in all of them), so it needs the kind to be named.
    const name = kindName(obj.apiVersion, obj.kind);
    if ((account.clusterScopedKinds ?? []).includes(name)) return undefined;
    return `${name} "${obj.name}" is cluster-scoped, and ${name} is not in the account's clusterScopedKinds: an account limited to namespaces (${allowed.join(', ')}) operates only on the cluster-scoped kinds listed there`;
  }
  const namespace = obj.namespace === undefined || obj.namespace === '' ? (scope === 'Namespaced' ? DEFAULT_NAMESPACE : undefined) : obj.namespace;
  if (namespace === undefined || allowed.includes(namespace)) return undefined;
  return outsideNamespaces(`namespace "${namespace}"`, allowed);
}

function outsideNamespaces(what: string, allowed: readonly string[]): string {
  return `${what} is not one of the account's namespaces (${allowed.join(', ')})`;
}
