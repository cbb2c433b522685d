import * as v from 'valibot';
import { numberedPageSchema } from '../answers/fields.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN, kubeconfigEntries, keepSpelling, oneKubeconfigSpelling } from './settings.ts';

/** A zone is the name of an agent replica set, by default `<deploymentName>_<namespace>`. */
export const zoneIdSchema = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
  v.regex(NAME_PATTERN, 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit'),
);

/** Longest batch of records in one POST or PATCH. */
export const MAX_BATCH = 1000;

const registrationEntries = {
  // Any string is accepted here: a name no source defines is answered as an unknown account.
  name: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(MAX_NAME_LENGTH)),
  zoneId: v.optional(zoneIdSchema),
  ...kubeconfigEntries('must'),
};

/** Element of a POST body (docs/api.md#account-request-records). */
export const registrationRecordSchema = v.pipe(
  v.strictObject(registrationEntries),
  oneKubeconfigSpelling<v.InferOutput<v.StrictObjectSchema<typeof registrationEntries, undefined>>>('must', 'kubeconfigFile'),
  v.transform(keepSpelling('kubeconfigFile')),
);

const activationEntries = { ...registrationEntries, state: v.picklist(['ACTIVE'], 'must be ACTIVE') };

/** Element of a PATCH body (docs/api.md#account-request-records): the POST fields plus the target `state`, which must be `ACTIVE`. */
export const activationRecordSchema = v.pipe(
  v.strictObject(activationEntries),
  oneKubeconfigSpelling<v.InferOutput<v.StrictObjectSchema<typeof activationEntries, undefined>>>('must', 'kubeconfigFile'),
  v.transform(keepSpelling('kubeconfigFile')),
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

const servedTime = (what: string) => v.pipe(v.string(), v.description(`${what} (RFC 3339, the driver's clock).`));

/** The `cluster` of the served account (docs/api.md#the-account-served): whether the cluster answers the caching agent. */
export const clusterStatusSchema = v.pipe(
  v.object({
    reachable: v.pipe(v.boolean(), v.description('Whether the cluster answers the caching agent with the account\'s credential.')),
    since: servedTime('When the present state began: the outage\'s start, or when the cluster answered again (or was first reached)'),
    reason: v.optional(
      v.pipe(v.picklist(['unreachable', 'unauthorized']), v.description('While not reachable: `unreachable` (no answer: refused, reset, timed out) or `unauthorized` (the API server refuses the credential, 401).')),
    ),
    error: v.optional(v.pipe(v.string(), v.description('While not reachable: the last failure, as the API server or the connection said it.'))),
    lastOutage: v.optional(
      v.pipe(
        v.object({ reason: v.string(), from: servedTime('When it began'), until: servedTime('When the cluster answered again') }),
        v.description('The last outage that ended.'),
      ),
    ),
    reportedBy: v.pipe(v.string(), v.description('The caching agent that reported it.')),
    reportedAt: servedTime('When the driver took the report'),
  }),
  v.description(
    'Whether the account\'s cluster answers its caching agent, as that agent last reported; absent until it has. `state` keeps its meaning (ACTIVE: held by its agents) whatever this says.',
  ),
);

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
  cluster: v.optional(clusterStatusSchema),
  permissionsIgnored: v.optional(
    v.pipe(
      v.literal(true),
      v.description('Present (true) when a role name in the permissions contains whitespace: the permissions are then not applied, and as with an account without permissions every authenticated caller may read the account, and write to it unless `api.auth.openAccounts` is `readOnly` (docs/api.md, Authorization).'),
    ),
  ),
  permissionsIgnoredReason: v.optional(v.pipe(v.string(), v.description('Why `permissionsIgnored` is set, naming the role.'))),
});

export type Account = v.InferOutput<typeof accountSchema>;
export type ServedClusterStatus = v.InferOutput<typeof clusterStatusSchema>;

/** The account list page (docs/api.md#endpoints). */
export const accountPageSchema = numberedPageSchema(accountSchema);

export type AccountPage = v.InferOutput<typeof accountPageSchema>;
