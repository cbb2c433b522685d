/**
 * The shapes of Kubernetes identities an operation names. They are checked loosely, as far as a
 * mistake can be told without the cluster: the API server has the final word on names of each kind.
 */

/** `v1`, `apps/v1`, `example.com/v1alpha1`. */
export const apiVersionPattern = /^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?\/)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?$/;

/** `Deployment`, `HorizontalPodAutoscaler`. */
export const kindPattern = /^[A-Za-z][A-Za-z0-9]{0,62}$/;

/** A DNS label, as namespaces are. */
export const namespacePattern = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

const CONTROL_OR_SPACE = /[\s\u0000-\u001f\u007f]/;

/**
 * Why `name` cannot name an object, or undefined. Names go into request paths, so `/`, `.`, `..`,
 * `%` and white space are refused here; kind-specific rules (DNS subdomain, RBAC colons) are the API
 * server's.
 */
export function objectNameProblem(name: string): string | undefined {
  if (name.length > 253) return 'must be at most 253 characters';
  if (name === '.' || name === '..' || name.includes('/') || name.includes('%') || CONTROL_OR_SPACE.test(name)) {
    return `"${name.slice(0, 100)}" cannot be an object name (no "/", "%", white space, "." or "..")`;
  }
  return undefined;
}
