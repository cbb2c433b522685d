/**
 * The mark `deploy` puts on every object it applies (docs/operations.md#actions), so that a cache with
 * `onlySpinnakerManaged` can ask the API server for these objects alone with a label selector
 * (docs/cache.md#what-is-cached). A label rather than an annotation: the API server filters lists
 * and watches by labels, never by annotations.
 */
export const MANAGED_LABEL = 'vendor-agent.io/managed';
export const MANAGED_LABEL_VALUE = 'true';

/** The label selector of the objects deploy applied. */
export const MANAGED_SELECTOR = `${MANAGED_LABEL}=${MANAGED_LABEL_VALUE}`;
