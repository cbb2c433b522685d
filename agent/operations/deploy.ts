/**
 * `deploy`: server-side apply of each manifest with the agent's field manager. First every manifest
 * is resolved against the cluster's discovery and the account's restrictions; if any cannot be
 * applied (a kind the cluster does not serve, a namespace outside the account's), nothing is applied.
 * Then namespaces and CRDs go first, in order, and the rest with a few requests in flight; a
 * manifest whose kind a CRD of the same operation defines waits for that kind to be served.
 */
import { groupKind } from '../../shared/operations/kinds.ts';
import type { KubeManifest } from '../../shared/operations/manifests.ts';
import { MANAGED_LABEL, MANAGED_LABEL_VALUE } from '../../shared/operations/managed-mark.ts';
import type { ObjectOutcomeRecord } from '../../shared/operations/model.ts';
import { runBounded } from '../../shared/table/core/bounded.ts';
import type { DeployAction__Output } from '../../shared/protocol/generated/vendor/agent/v1/DeployAction.ts';
import { objectPath } from './resource-discovery.ts';
import { call, FIELD_MANAGER, failedOutcome, failureOf, notServed, objectVersion, outcome, resolveObject, OutOfTime, type ExecContext, type ObjectId, type Resolved } from './kube.ts';

/** Applies in flight at once after namespaces and CRDs. */
export const APPLY_CONCURRENCY = 8;
/** How often, and how long at most, to look for a kind a CRD of the same operation defines. */
const CRD_POLL_MS = 250;
const CRD_WAIT_MS = 30_000;

const FIRST_KINDS = new Set(['/Namespace', 'apiextensions.k8s.io/CustomResourceDefinition']);

function idOf(m: KubeManifest): ObjectId {
  return { apiVersion: m.apiVersion, kind: m.kind, namespace: m.metadata.namespace, name: m.metadata.name };
}

/** `group/version Kind` pairs the CRD manifests of the operation will make served. */
function kindsDefined(manifests: readonly (KubeManifest | undefined)[]): Set<string> {
  const out = new Set<string>();
  for (const m of manifests) {
    if (m === undefined || groupKind(m.apiVersion, m.kind) !== 'apiextensions.k8s.io/CustomResourceDefinition') continue;
    const spec = m.spec as { group?: unknown; names?: { kind?: unknown }; versions?: { name?: unknown }[] } | undefined;
    if (typeof spec?.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
    for (const v of spec.versions ?? []) if (typeof v.name === 'string') out.add(`${spec.group}/${v.name} ${spec.names.kind}`);
  }
  return out;
}

function parse(text: string): KubeManifest | undefined {
  try {
    return JSON.parse(text) as KubeManifest;
  } catch {
    return undefined;
  }
}

function skipped(index: number, obj: ObjectId, why: string): ObjectOutcomeRecord {
  return outcome(index, obj, 'skipped', { message: why });
}

/**
 * The manifest's labels with the mark a cache with onlySpinnakerManaged selects by
 * (shared/operations/managed-mark.ts); labels that are not a mapping stay as given, for the API server to refuse.
 */
function managedLabels(labels: unknown): { labels?: unknown } {
  if (labels === undefined || labels === null) return { labels: { [MANAGED_LABEL]: MANAGED_LABEL_VALUE } };
  if (typeof labels !== 'object' || Array.isArray(labels)) return {};
  return { labels: { ...labels, [MANAGED_LABEL]: MANAGED_LABEL_VALUE } };
}

async function applyOne(ctx: ExecContext, index: number, m: KubeManifest, r: Resolved, force: boolean): Promise<ObjectOutcomeRecord> {
  const metadata = { ...m.metadata, ...managedLabels(m.metadata['labels']) };
  if (r.namespace === undefined) delete metadata.namespace;
  else metadata.namespace = r.namespace;
  const obj = { ...idOf(m), namespace: r.namespace };
  try {
    const res = await call(ctx, {
      method: 'PATCH',
      path: objectPath(r.info, r.namespace, m.metadata.name),
      query: { fieldManager: FIELD_MANAGER, force: force ? 'true' : undefined },
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: JSON.stringify({ ...m, metadata }),
    });
    return outcome(index, obj, res.status === 201 ? 'created' : 'configured', objectVersion(res));
  } catch (error) {
    if (error instanceof OutOfTime || ctx.signal.aborted) return skipped(index, obj, failureOf(error).message);
    return failedOutcome(index, obj, failureOf(error));
  }
}

/** Waits until the kind a CRD of this operation defines is served, then resolves it. */
async function resolveDefined(ctx: ExecContext, m: KubeManifest, override: string): Promise<Resolved | string> {
  const until = Math.min(ctx.deadline, ctx.clock.now() + CRD_WAIT_MS);
  for (;;) {
    ctx.discovery.forget(m.apiVersion);
    const r = await resolveObject(ctx, idOf(m), override);
    // Only a kind not served yet is waited for: a refusal (the account's restrictions) stands at once.
    if (typeof r !== 'string' || r !== notServed(idOf(m)) || ctx.clock.now() + CRD_POLL_MS > until || ctx.signal.aborted) return r;
    await ctx.clock.sleep(CRD_POLL_MS, ctx.signal).catch(() => undefined);
  }
}

export async function deploy(ctx: ExecContext, action: DeployAction__Output): Promise<ObjectOutcomeRecord[]> {
  const manifests = action.manifests.map(parse);
  const override = action.namespace;
  const defined = kindsDefined(manifests);
  const resolved: (Resolved | undefined)[] = [];
  const problems = new Map<number, string>();
  const deferred: number[] = [];
  for (const [i, m] of manifests.entries()) {
    if (m === undefined) {
      problems.set(i, 'the manifest is not a JSON object');
      continue;
    }
    const r = await resolveObject(ctx, idOf(m), override);
    if (typeof r !== 'string') resolved[i] = r;
    else if (defined.has(`${m.apiVersion} ${m.kind}`)) deferred.push(i);
    else problems.set(i, r);
  }
  const outcomes: ObjectOutcomeRecord[] = new Array(manifests.length);
  const idAt = (i: number): ObjectId => (manifests[i] === undefined ? { apiVersion: '', kind: '', name: '' } : idOf(manifests[i] as KubeManifest));
  if (problems.size > 0) {
    const first = [...problems.keys()][0] as number;
    manifests.forEach((_, i) => {
      const problem = problems.get(i);
      outcomes[i] = problem === undefined ? skipped(i, idAt(i), `not applied: manifest ${first} of the operation cannot be applied`) : failedOutcome(i, idAt(i), problem);
    });
    return outcomes;
  }
  const first: number[] = [];
  const rest: number[] = [];
  resolved.forEach((r, i) => {
    if (r === undefined) return;
    (FIRST_KINDS.has(groupKind(r.info.apiVersion, r.info.kind)) ? first : rest).push(i);
  });
  const apply = async (i: number, r: Resolved) => {
    outcomes[i] = await applyOne(ctx, i, manifests[i] as KubeManifest, r, action.forceConflicts);
  };
  for (const i of first) await apply(i, resolved[i] as Resolved);
  await runBounded(rest.map((i) => () => apply(i, resolved[i] as Resolved)), APPLY_CONCURRENCY);
  for (const i of deferred) {
    const m = manifests[i] as KubeManifest;
    const r = await resolveDefined(ctx, m, override);
    if (typeof r === 'string') outcomes[i] = failedOutcome(i, idOf(m), r);
    else await apply(i, r);
  }
  return outcomes;
}
