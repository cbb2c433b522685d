import * as v from 'valibot';
import { KIND_NAME } from '../operations/kinds.ts';
import { kubeconfigReferenceSchema } from './kubeconfig-reference.ts';

/** Longest account name or zone id; the Kubernetes limit for a DNS subdomain name. */
export const MAX_NAME_LENGTH = 253;

const NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** Account names as sources define them: letters, digits, `.`, `_`, `-`, starting and ending alphanumeric. */
export const accountNameSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
  v.regex(NAME_PATTERN, 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit'),
);

/** A zone is the name of an agent replica set, by default `<deploymentName>_<namespace>`. */
export const zoneIdSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
  v.regex(NAME_PATTERN, 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit'),
);

// docs/agent-config.md#permissions: a role name with whitespace is accepted, but then the account's permissions are not
// applied and every caller gets access (`shared/accounts/permissions.ts`); the API flags such accounts
// and the control plane warns about them.
const roleNames = v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')));

const stringList = v.array(v.pipe(v.string(), v.minLength(1, 'must not be empty')));

// Namespace objects are governed by `namespaces` alone: listing the kind would allow every namespace.
const clusterScopedKinds = v.array(
  v.pipe(
    v.string(),
    v.regex(KIND_NAME, 'must be Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io)'),
    v.check((s) => s !== 'Namespace', 'must not be Namespace: Namespace objects are allowed by namespaces'),
  ),
);

/** The per-account keys of `kubernetes.accounts[]` (docs/agent-config.md#per-account-kubernetesaccounts), shared by the agent and the driver config. */
export const accountSettingsEntries = {
  name: accountNameSchema,
  context: v.optional(v.string()),
  kubeconfigFile: v.optional(kubeconfigReferenceSchema),
  kubeConfigFile: v.optional(kubeconfigReferenceSchema),
  serviceAccount: v.optional(v.boolean()),
  insecure: v.optional(v.boolean()),
  noProxy: v.optional(v.boolean()),
  oAuthScopes: v.optional(stringList),
  namespaces: v.optional(stringList),
  omitNamespaces: v.optional(stringList),
  onlyNamespacedResources: v.optional(v.boolean()),
  customResourceDefinitions: v.optional(
    v.array(
      v.strictObject({
        kind: v.pipe(v.string(), v.regex(/^[^.\s]+\.\S+$/, 'must have the form Kind.group')),
        scope: v.optional(v.picklist(['Cluster', 'Namespaced'])),
      }),
    ),
  ),
  kinds: v.optional(stringList),
  omitKinds: v.optional(stringList),
  clusterScopedKinds: v.optional(clusterScopedKinds),
  onlySpinnakerManaged: v.optional(v.boolean()),
  metrics: v.optional(v.boolean()),
  maxResumableResourceAgeMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  permissions: v.optional(
    v.array(
      v.pipe(
        v.strictObject({ READ: v.optional(roleNames), WRITE: v.optional(roleNames) }),
        v.check((p) => p.READ !== undefined || p.WRITE !== undefined, 'needs a READ or WRITE list'),
      ),
    ),
  ),
};

/** Accepts both spellings of the kubeconfig key (docs/api.md#account-request-records) and keeps one, `kubeconfigFile`. */
function oneKubeconfigSpelling<T extends { kubeconfigFile?: string | undefined; kubeConfigFile?: string | undefined }>(
  value: T,
): Omit<T, 'kubeConfigFile'> {
  const { kubeConfigFile, ...rest } = value;
  if (kubeConfigFile === undefined) return rest;
  return { ...rest, kubeconfigFile: kubeConfigFile };
}

function notBothSpellings(value: { kubeconfigFile?: string | undefined; kubeConfigFile?: string | undefined }): boolean {
  return value.kubeconfigFile === undefined || value.kubeConfigFile === undefined;
}

const BOTH_SPELLINGS = 'give kubeconfigFile or kubeConfigFile, not both';

export const accountSettingsSchema = v.pipe(
  v.strictObject(accountSettingsEntries),
  v.forward(v.check((x) => notBothSpellings(x), BOTH_SPELLINGS), ['kubeConfigFile']),
  v.transform((x) => oneKubeconfigSpelling(x)),
);

export type AccountSettings = v.InferOutput<typeof accountSettingsSchema>;

/** Longest batch of records in one POST or PATCH. */
export const MAX_BATCH = 1000;

const registrationEntries = {
  // Any string is accepted here: a name no source defines is answered as an unknown account.
  name: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(MAX_NAME_LENGTH)),
  zoneId: v.optional(zoneIdSchema),
  kubeconfigFile: v.optional(kubeconfigReferenceSchema),
  kubeConfigFile: v.optional(kubeconfigReferenceSchema),
};

/** Element of a POST body (docs/api.md#account-request-records). */
export const registrationRecordSchema = v.pipe(
  v.strictObject(registrationEntries),
  v.forward(v.check((x) => notBothSpellings(x), BOTH_SPELLINGS), ['kubeConfigFile']),
  v.transform((x) => oneKubeconfigSpelling(x)),
);

/** Element of a PATCH body (docs/api.md#account-request-records): the POST fields plus the target `state`, which must be `ACTIVE`. */
export const activationRecordSchema = v.pipe(
  v.strictObject({ ...registrationEntries, state: v.picklist(['ACTIVE'], 'must be ACTIVE') }),
  v.forward(v.check((x) => notBothSpellings(x), BOTH_SPELLINGS), ['kubeConfigFile']),
  v.transform((x) => oneKubeconfigSpelling(x)),
);

export type RegistrationRecord = v.InferOutput<typeof registrationRecordSchema>;
export type ActivationRecord = v.InferOutput<typeof activationRecordSchema>;

function batchOf<T extends v.GenericSchema>(record: T) {
  return v.pipe(
    v.array(record, 'must be a JSON array of account records'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_BATCH, `must hold at most ${MAX_BATCH} records`),
  );
}

export const registrationBatchSchema = batchOf(registrationRecordSchema);
export const activationBatchSchema = batchOf(activationRecordSchema);

export const ACCOUNT_STATES = ['INACTIVE', 'ACTIVE', 'FAILED'] as const;
export type AccountState = (typeof ACCOUNT_STATES)[number];

export const SERVED_SOURCES = ['driver', 'static-agent-config'] as const;

/** An element of the served account's `agents` (docs/api.md#the-account-served). */
export const agentRecordSchema = v.object({
  agentId: v.string(),
  caching: v.boolean(),
});

/** The account as the API serves it (docs/api.md#the-account-served): `state` is absent until the account is registered or assigned. */
export const accountSchema = v.object({
  name: v.string(),
  type: v.literal('kubernetes'),
  source: v.picklist(SERVED_SOURCES),
  config: v.record(v.string(), v.unknown()),
  zoneId: v.optional(v.string()),
  agents: v.array(agentRecordSchema),
  lastAssignmentMsg: v.string(),
  state: v.optional(v.picklist(ACCOUNT_STATES)),
  permissionsIgnored: v.optional(
    v.pipe(
      v.literal(true),
      v.description('Present (true) when a role name in the permissions contains whitespace: the permissions are then not applied, and as with an account without permissions every authenticated caller may read the account, and write to it unless `api.auth.openAccounts` is `readOnly` (docs/api.md, Authorization).'),
    ),
  ),
  permissionsIgnoredReason: v.optional(v.pipe(v.string(), v.description('Why `permissionsIgnored` is set, naming the role.'))),
});

export type Account = v.InferOutput<typeof accountSchema>;

/** The account list page (docs/api.md#endpoints). */
export const accountPageSchema = v.object({
  items: v.array(accountSchema),
  page: v.pipe(v.number(), v.integer()),
  limit: v.pipe(v.number(), v.integer()),
  total: v.pipe(v.number(), v.integer()),
});

export type AccountPage = v.InferOutput<typeof accountPageSchema>;
