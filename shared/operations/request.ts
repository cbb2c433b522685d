/**
 * The body of `POST /vendor/accounts/{accountId}/operations` (docs/operations.md): one action with
 * its fields. The schema checks shapes; `parseOperationRequest` adds the manifest checks and returns
 * the request as stored and sent to the agent, with manifests parsed into objects.
 */
import * as v from 'valibot';
import { VendorError, type Issue } from '../errors.ts';
import { toIssues } from '../accounts/validate.ts';
import { parseManifests, type KubeManifest } from './manifests.ts';
import { apiVersionPattern, kindPattern, namespacePattern, objectNameProblem } from './names.ts';

export const OPERATION_ACTIONS = ['deploy', 'delete', 'scale', 'patch', 'rolloutRestart', 'rolloutUndo'] as const;
export type OperationAction = (typeof OPERATION_ACTIONS)[number];

export const PATCH_TYPES = ['strategic', 'merge', 'json'] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

export const PROPAGATION_POLICIES = ['Background', 'Foreground', 'Orphan'] as const;
export type PropagationPolicy = (typeof PROPAGATION_POLICIES)[number];

/** Most manifests in one deploy, after YAML documents and `List` items are counted. */
export const MAX_MANIFESTS = 500;
/** Most targets of one delete, scale or restart. */
export const MAX_TARGETS = 100;
/** Longest `timeoutSeconds` a request may ask for: a day. */
export const MAX_TIMEOUT_SECONDS = 86_400;
export const MAX_REPLICAS = 1_000_000;
/**
 * Highest `toRevision`: a Deployment's revision counts up from 1 and never gets near it. A larger
 * number is no revision, and past 2^53 - 1 it cannot even be carried exactly (64-bit protocol fields
 * are read as JavaScript numbers).
 */
export const MAX_REVISION = Number.MAX_SAFE_INTEGER;
/**
 * Longest time an operation may be given, from its storing to its deadline: the driver's
 * `operations.timeoutMs` may be set up to it, a request's `timeoutSeconds` asks for less. The time
 * left that the driver hands the agent (`timeout_ms`) is never more.
 */
export const MAX_OPERATION_TIMEOUT_MS = 7 * 86_400_000;

const namespaceSchema = v.pipe(
  v.string(),
  v.regex(namespacePattern, 'must be a namespace name (lower-case letters, digits and "-", at most 63 characters)'),
);

export const objectRefSchema = v.strictObject({
  apiVersion: v.pipe(v.string(), v.regex(apiVersionPattern, 'must be an API version such as v1 or apps/v1')),
  kind: v.pipe(v.string(), v.regex(kindPattern, 'must be a kind such as Deployment')),
  namespace: v.optional(namespaceSchema),
  name: v.pipe(
    v.string(),
    v.minLength(1, 'must not be empty'),
    v.rawCheck(({ dataset, addIssue }) => {
      const problem = dataset.typed ? objectNameProblem(dataset.value) : undefined;
      if (problem !== undefined) addIssue({ message: problem });
    }),
  ),
});

export type ObjectRefJson = v.InferOutput<typeof objectRefSchema>;

const timeoutSeconds = v.optional(
  v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'), v.maxValue(MAX_TIMEOUT_SECONDS, `must be at most ${MAX_TIMEOUT_SECONDS}`)),
);

const targets = v.pipe(
  v.array(objectRefSchema, 'must be a list of objects ({ apiVersion, kind, namespace?, name })'),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_TARGETS, `must hold at most ${MAX_TARGETS} objects`),
);

const JSON_PATCH_OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test'] as const;
const jsonPatchOperation = v.looseObject({
  op: v.picklist(JSON_PATCH_OPS, `must be one of ${JSON_PATCH_OPS.join(', ')}`),
  path: v.pipe(v.string('must be a JSON pointer such as /spec/replicas'), v.regex(/^(\/.*)?$/, 'must be a JSON pointer such as /spec/replicas')),
});

/** Each operation of a JSON patch, checked apart so every bad one is named by its index. */
function jsonPatchIssues(patch: readonly unknown[]): Issue[] {
  return patch.flatMap((op, i) => {
    const result = v.safeParse(jsonPatchOperation, op, { abortEarly: false });
    return result.success ? [] : toIssues(result.issues, `patch[${i}]`).map((issue) => (issue.path === `patch[${i}]` ? { ...issue, message: 'must be an object with op and path' } : issue));
  });
}

export const operationBodySchema = v.variant(
  'action',
  [
    v.strictObject({
      action: v.literal('deploy'),
      /** A JSON list of manifests, or YAML text with one or more documents. */
      manifests: v.union([v.string(), v.array(v.unknown())], 'must be a list of manifests or a string of YAML'),
      namespace: v.optional(namespaceSchema),
      forceConflicts: v.optional(v.boolean()),
      timeoutSeconds,
    }),
    v.strictObject({
      action: v.literal('delete'),
      targets,
      propagationPolicy: v.optional(v.picklist(PROPAGATION_POLICIES, `must be one of ${PROPAGATION_POLICIES.join(', ')}`)),
      timeoutSeconds,
    }),
    v.strictObject({
      action: v.literal('scale'),
      targets,
      replicas: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'), v.maxValue(MAX_REPLICAS, `must be at most ${MAX_REPLICAS}`)),
      timeoutSeconds,
    }),
    v.pipe(
      v.strictObject({
        action: v.literal('patch'),
        target: objectRefSchema,
        patchType: v.picklist(PATCH_TYPES, `must be one of ${PATCH_TYPES.join(', ')}`),
        patch: v.union([v.array(v.unknown()), v.record(v.string(), v.unknown())], 'must be an object, or for a json patch a list of operations'),
        timeoutSeconds,
      }),
      v.forward(
        v.check(
          (b) => (b.patchType === 'json') === Array.isArray(b.patch),
          'a json patch is a list of operations; a strategic or merge patch is an object',
        ),
        ['patch'],
      ),
    ),
    v.strictObject({ action: v.literal('rolloutRestart'), targets, timeoutSeconds }),
    v.strictObject({
      action: v.literal('rolloutUndo'),
      target: objectRefSchema,
      toRevision: v.optional(v.pipe(v.number(), v.integer('must be an integer'), v.minValue(0, 'must be at least 0'), v.maxValue(MAX_REVISION, `must be at most ${MAX_REVISION}`))),
      timeoutSeconds,
    }),
  ],
  `must name an action: one of ${OPERATION_ACTIONS.join(', ')}`,
);

type Common = { timeoutSeconds?: number };

/** A request as stored and sent to the agent: manifests parsed, defaults filled in. */
export type OperationRequest =
  | ({ action: 'deploy'; manifests: KubeManifest[]; namespace?: string; forceConflicts: boolean } & Common)
  | ({ action: 'delete'; targets: ObjectRefJson[]; propagationPolicy?: PropagationPolicy } & Common)
  | ({ action: 'scale'; targets: ObjectRefJson[]; replicas: number } & Common)
  | ({ action: 'patch'; target: ObjectRefJson; patchType: PatchType; patch: Record<string, unknown> | Record<string, unknown>[] } & Common)
  | ({ action: 'rolloutRestart'; targets: ObjectRefJson[] } & Common)
  | ({ action: 'rolloutUndo'; target: ObjectRefJson; toRevision: number } & Common);

function invalid(issues: Issue[]): VendorError {
  return new VendorError('invalid_input', `the operation is invalid: ${issues.map((i) => `${i.path || '(root)'}: ${i.message}`).join('; ')}`, { issues });
}

/** The identity a manifest or target is acted on under; two equal ones in a request are refused. */
export function identityKey(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return `${group}/${kind}/${namespace ?? ''}/${name}`;
}

/**
 * Validates a request body. Throws `invalid_input` naming every bad field and manifest; returns the
 * request with manifests parsed and the request path of each manifest (for later issues).
 */
export function parseOperationRequest(body: unknown): { request: OperationRequest; paths: string[] } {
  const result = v.safeParse(operationBodySchema, body, { abortEarly: false });
  if (!result.success) throw invalid(toIssues(result.issues));
  const b = result.output;
  const timeout = b.timeoutSeconds === undefined ? {} : { timeoutSeconds: b.timeoutSeconds };
  switch (b.action) {
    case 'deploy': {
      const { manifests, paths, issues } = parseManifests(b.manifests);
      if (manifests.length > MAX_MANIFESTS) issues.push({ path: 'manifests', message: `holds ${manifests.length} manifests; at most ${MAX_MANIFESTS} per operation` });
      const seen = new Map<string, string>();
      manifests.forEach((m, i) => {
        const key = identityKey(m.apiVersion, m.kind, b.namespace ?? m.metadata.namespace, m.metadata.name);
        const first = seen.get(key);
        if (first === undefined) seen.set(key, paths[i] as string);
        else issues.push({ path: paths[i] as string, message: `the same object as ${first} (${m.kind} ${m.metadata.name})` });
      });
      if (issues.length > 0) throw invalid(issues);
      return {
        request: { action: 'deploy', manifests, ...(b.namespace === undefined ? {} : { namespace: b.namespace }), forceConflicts: b.forceConflicts ?? false, ...timeout },
        paths,
      };
    }
    case 'delete':
      return { request: { action: 'delete', targets: b.targets, ...(b.propagationPolicy === undefined ? {} : { propagationPolicy: b.propagationPolicy }), ...timeout }, paths: b.targets.map((_, i) => `targets[${i}]`) };
    case 'scale':
      return { request: { action: 'scale', targets: b.targets, replicas: b.replicas, ...timeout }, paths: b.targets.map((_, i) => `targets[${i}]`) };
    case 'patch': {
      const issues = Array.isArray(b.patch) ? jsonPatchIssues(b.patch) : [];
      if (issues.length > 0) throw invalid(issues);
      return { request: { action: 'patch', target: b.target, patchType: b.patchType, patch: b.patch as Record<string, unknown> | Record<string, unknown>[], ...timeout }, paths: ['target'] };
    }
    case 'rolloutRestart':
      return { request: { action: 'rolloutRestart', targets: b.targets, ...timeout }, paths: b.targets.map((_, i) => `targets[${i}]`) };
    case 'rolloutUndo':
      return { request: { action: 'rolloutUndo', target: b.target, toRevision: b.toRevision ?? 0, ...timeout }, paths: ['target'] };
  }
}

/** The objects a request acts on, in outcome order, with the namespace they are acted on in when known. */
export function requestObjects(request: OperationRequest): { apiVersion: string; kind: string; namespace?: string | undefined; name: string }[] {
  switch (request.action) {
    case 'deploy':
      return request.manifests.map((m) => ({ apiVersion: m.apiVersion, kind: m.kind, namespace: request.namespace ?? m.metadata.namespace, name: m.metadata.name }));
    case 'delete':
    case 'scale':
    case 'rolloutRestart':
      return request.targets;
    case 'patch':
    case 'rolloutUndo':
      return [request.target];
  }
}
