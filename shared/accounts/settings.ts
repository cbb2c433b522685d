/**
 * An account's settings: the per-account keys of `kubernetes.accounts[]`
 * (docs/agent-config.md#per-account-kubernetesaccounts), one rule per key wherever an account is
 * defined: an entry of vendor-agent.yml, of vendor-driver.yml or of another driver source, an
 * agent's static account in Hello, and the kubeconfig keys of the API's account records. The choice
 * of each rule is written in docs/agent-config.md#one-rule-for-every-definition.
 *
 * Every boundary uses these rules; only the words of a refusal differ (`Phrasing`), and what a file
 * does with a key it does not know (vendor-agent.yml warns, every other boundary refuses).
 */
import * as v from 'valibot';
import { KIND_NAME } from '../operations/kinds.ts';
import { kubeconfigReferenceProblem, kubeconfigReferenceSchema, REFUSED_VALUE } from './kubeconfig-reference.ts';

/**
 * How a refusal is worded: vendor-agent.yml's report prints `<key path>: expected ..., got <value>`;
 * vendor-driver.yml, the other sources and the API answer `<key path>: must ...`.
 */
export type Phrasing = 'expected' | 'must';

/** Longest account name or zone id; the Kubernetes limit for a DNS subdomain name. */
export const MAX_NAME_LENGTH = 253;

/** Account names and zone ids: letters, digits, `.`, `_`, `-`, starting and ending alphanumeric. */
export const NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** A namespace name is a DNS label: the cluster has no namespace by any other name. */
const NAMESPACE = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

/** `Kind.group`, the group a DNS subdomain with at least one dot, as the cluster requires of a CRD's group. */
const CRD_KIND = /^[A-Za-z][A-Za-z0-9]*\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)+$/;

export const CRD_SCOPES = ['Namespaced', 'Cluster'] as const;

/** What a key left out means; the same for every definition (docs/agent-config.md#per-account-kubernetesaccounts). */
export const SETTING_DEFAULTS = {
  context: '',
  serviceAccount: false,
  insecure: false,
  noProxy: false,
  oAuthScopes: [] as string[],
  namespaces: [] as string[],
  omitNamespaces: [] as string[],
  onlyNamespacedResources: false,
  customResourceDefinitions: [] as { kind: string; scope: (typeof CRD_SCOPES)[number] }[],
  crdScope: 'Namespaced' as (typeof CRD_SCOPES)[number],
  kinds: [] as string[],
  omitKinds: [] as string[],
  clusterScopedKinds: [] as string[],
  onlySpinnakerManaged: false,
  metrics: false,
  maxResumableResourceAgeMs: 300_000,
  permissions: [] as { READ?: string[]; WRITE?: string[] }[],
};

/** A role name with whitespace switches the account's permissions off (docs/agent-config.md#permissions). */
export function hasWhitespace(role: string): boolean {
  return /\s/.test(role);
}

function words(p: Phrasing) {
  return {
    /** The refusal of a rule, in this phrasing. */
    say: (expected: string, must: string) => (p === 'expected' ? expected : must),
    /** A refusal of the value's type: vendor-agent.yml names what it expected, the others keep valibot's words. */
    typed: (expected: string) => (p === 'expected' ? expected : undefined),
  };
}

/** A string that must not be empty; `what` names it in vendor-agent.yml's report. */
function nonEmpty(p: Phrasing, what: string) {
  const { say, typed } = words(p);
  return v.pipe(v.string(typed(`expected ${what}`)), v.minLength(1, say(`expected a non-empty ${what.replace(/^an? /, '')}`, 'must not be empty')));
}

function listOf<T extends v.GenericSchema>(p: Phrasing, item: T, description: string) {
  return v.pipe(v.array(item, words(p).typed('expected a list')), v.description(description));
}

function flag(p: Phrasing, description: string) {
  return v.pipe(v.boolean(words(p).typed('expected true or false')), v.description(description));
}

/** The account name: the driver records no other name, so none other is accepted anywhere. */
export function accountName(p: Phrasing) {
  const { say, typed } = words(p);
  const expected = `expected an account name: letters, digits, ".", "_" or "-", starting and ending with a letter or digit, at most ${MAX_NAME_LENGTH} characters`;
  return v.pipe(
    v.string(typed(expected)),
    v.minLength(1, say(expected, 'must not be empty')),
    v.maxLength(MAX_NAME_LENGTH, say(expected, `must be at most ${MAX_NAME_LENGTH} characters`)),
    v.regex(NAME_PATTERN, say(expected, 'must be letters, digits, ".", "_" or "-", starting and ending with a letter or digit')),
    v.description('Name of the cluster in the control plane.'),
  );
}

/**
 * A kubeconfig path or secret reference, by the one rule of `kubeconfig-reference.ts`
 * (docs/api.md#kubeconfig-references). A refused value is never shown: vendor-agent.yml's report
 * prints the value found, so its check keeps even an overlong value out of the issue's input.
 */
export function kubeconfigReference(p: Phrasing) {
  if (p === 'must') return kubeconfigReferenceSchema;
  const expected = 'expected a kubeconfig file path or secret reference';
  return v.pipe(
    v.string(expected),
    v.minLength(1, expected),
    v.rawCheck<string>(({ dataset, addIssue }) => {
      // An empty value was reported by the length rule above.
      if (!dataset.typed || dataset.value === '') return;
      const problem = kubeconfigReferenceProblem(dataset.value);
      if (problem !== undefined) addIssue({ input: REFUSED_VALUE, received: 'a value that is not a kubeconfig reference', message: `${expected}: ${problem}` });
    }),
  );
}

/** Both spellings of the kubeconfig key; an account gives at most one. */
export function kubeconfigEntries(p: Phrasing) {
  return { kubeconfigFile: v.optional(kubeconfigReference(p)), kubeConfigFile: v.optional(kubeconfigReference(p)) };
}

/** The spelling a boundary keeps: vendor-agent.yml its own `kubeConfigFile`, every other one the API's `kubeconfigFile`. */
export type KubeconfigSpelling = 'kubeConfigFile' | 'kubeconfigFile';

function otherSpelling(kept: KubeconfigSpelling): KubeconfigSpelling {
  return kept === 'kubeConfigFile' ? 'kubeconfigFile' : 'kubeConfigFile';
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A rule between keys of one mapping, reported at the key `at` with its value. It is moot, and
 * not checked, while one of its `keys` breaks its own rule.
 */
export function keyRule<T>(keys: readonly string[], at: string, holds: (value: Record<string, unknown>) => boolean, message: string) {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    const value: unknown = dataset.value;
    if (!isMapping(value)) return;
    if (dataset.issues?.some((issue) => keys.includes(String(issue.path?.[0]?.key)))) return;
    if (holds(value)) return;
    addIssue({ message, input: value[at], path: [{ type: 'object', origin: 'value', input: value, key: at, value: value[at] }] });
  });
}

/** Refuses both spellings of the kubeconfig key at once, pointing at the one the boundary does not keep. */
export function oneKubeconfigSpelling<T>(p: Phrasing, kept: KubeconfigSpelling) {
  return keyRule<T>(
    ['kubeConfigFile', 'kubeconfigFile'],
    otherSpelling(kept),
    (a) => a['kubeConfigFile'] === undefined || a['kubeconfigFile'] === undefined,
    words(p).say('expected only one of kubeConfigFile and kubeconfigFile (they are the same key)', 'give kubeconfigFile or kubeConfigFile, not both'),
  );
}

/** The kubeconfig under the one spelling `kept`, the other key gone (a key given as `kept` stays in its place). */
export function keepSpelling<K extends KubeconfigSpelling>(kept: K) {
  return <T extends { kubeconfigFile?: string | undefined; kubeConfigFile?: string | undefined }>(value: T) => {
    const { [otherSpelling(kept)]: other, ...rest } = value;
    return (other === undefined ? rest : { ...rest, [kept]: other }) as Omit<T, KubeconfigSpelling> & { [S in K]?: string };
  };
}

/** One `permissions[]` entry: a READ and/or WRITE list of role names, nothing else (a misspelt type must not open the account). */
function permission(p: Phrasing) {
  const { say, typed } = words(p);
  const roles = v.array(nonEmpty(p, 'a role name'), typed('expected a list of role names'));
  return v.pipe(
    v.strictObject(
      { READ: v.optional(roles), WRITE: v.optional(roles) },
      p === 'must'
        ? undefined
        : (issue) =>
            issue.path?.at(-1)?.origin === 'key'
              ? 'expected READ or WRITE as the permission type'
              : 'expected a mapping with a READ or WRITE key and a list of role names',
    ),
    v.check((e) => e.READ !== undefined || e.WRITE !== undefined, say('expected a READ or WRITE key with a list of role names', 'needs a READ or WRITE list')),
  );
}

/** The keys of a `customResourceDefinitions[]` entry; the boundary decides what an unknown key in it means. */
export function crdEntries(p: Phrasing) {
  const { say, typed } = words(p);
  return {
    kind: v.pipe(
      v.string(typed('expected Kind.group')),
      v.regex(CRD_KIND, say('expected Kind.group (for example Rollout.argoproj.io)', 'must have the form Kind.group, the group with a dot (for example Rollout.argoproj.io)')),
      v.description('CRD to expose, in the form Kind.group.'),
    ),
    scope: v.pipe(v.picklist(CRD_SCOPES, typed('expected Namespaced or Cluster')), v.description('Scope of the CRD.')),
  };
}

/**
 * The value rule of each key but `name` and the kubeconfig, with its description. Which keys may be
 * left out, and whether the parse fills in `SETTING_DEFAULTS`, is the boundary's: the agent's file
 * is read with its defaults, the others keep what was given.
 */
export function settingValues<C extends v.GenericSchema<unknown, { kind: string; scope?: (typeof CRD_SCOPES)[number] | undefined }>>(p: Phrasing, crd: C) {
  const { say, typed } = words(p);
  const namespace = v.pipe(
    v.string(typed('expected a namespace name')),
    v.regex(NAMESPACE, say('expected a namespace name (lower-case letters, digits and -, at most 63)', 'must be a namespace name (lower-case letters, digits and -, at most 63)')),
  );
  // Namespace objects are governed by `namespaces` alone: listing the kind would allow every namespace.
  const clusterScopedKind = v.pipe(
    v.string(typed('expected Kind or Kind.group')),
    v.regex(KIND_NAME, say('expected Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io)', 'must be Kind for a core kind or Kind.group (for example ClusterRole.rbac.authorization.k8s.io)')),
    v.check((s) => s !== 'Namespace', say('expected a kind other than Namespace: Namespace objects are allowed by namespaces', 'must not be Namespace: Namespace objects are allowed by namespaces')),
  );
  const expectedAge = 'expected an integer >= 1 (milliseconds)';
  return {
    context: v.pipe(v.string(typed('expected a string')), v.description('Context of the kubeconfig to use; empty: its current context.')),
    serviceAccount: flag(p, 'Use the pod service account against the API server of the cluster the agent runs in.'),
    insecure: flag(p, 'Do not verify the TLS certificate of the cluster API server.'),
    noProxy: flag(p, 'Ignore the proxy environment variables for this cluster.'),
    oAuthScopes: listOf(p, nonEmpty(p, 'a scope'), 'OAuth scopes used with the gcp auth provider.'),
    namespaces: listOf(p, namespace, 'Namespaces to monitor; empty: all.'),
    omitNamespaces: listOf(p, nonEmpty(p, 'a namespace name'), 'Namespaces not to cache, also when namespaces lists them; with no namespaces: every namespace but these.'),
    onlyNamespacedResources: flag(p, 'Ignore non-namespaced resources.'),
    customResourceDefinitions: listOf(p, crd, 'CRDs to expose to the control plane.'),
    kinds: listOf(p, nonEmpty(p, 'a kind name'), 'When not empty, only these kinds (singular, without group) are cached.'),
    omitKinds: listOf(p, nonEmpty(p, 'a kind name'), 'Kinds not to cache.'),
    clusterScopedKinds: listOf(
      p,
      clusterScopedKind,
      'With namespaces listed: the cluster-scoped kinds operations may still act on, as Kind (core) or Kind.group; every other cluster-scoped kind is refused.',
    ),
    onlySpinnakerManaged: flag(p, 'Cache only the objects deploy applied: those labelled vendor-agent.io/managed=true.'),
    metrics: flag(p, 'Send pod metrics to the control plane every 20 seconds.'),
    // Larger values do not survive the protocol's 64-bit field as a JavaScript number.
    maxResumableResourceAgeMs: v.pipe(
      v.number(typed(expectedAge)),
      v.integer(typed(expectedAge)),
      // 0 once meant the default; refused so that no value says something other than what it does.
      v.minValue(1, say('expected an integer >= 1 (milliseconds); leave the key out for the default, 300000', 'must be at least 1 (milliseconds); leave the key out for the default, 300000')),
      v.maxValue(Number.MAX_SAFE_INTEGER, typed(expectedAge)),
      v.description('Resume watches from resource versions not older than this, in milliseconds (at least 1).'),
    ),
    permissions: listOf(p, permission(p), 'READ and WRITE permissions, each a list of role names (docs/agent-config.md#permissions).'),
  };
}

const must = settingValues('must', v.strictObject({ ...crdEntries('must'), scope: v.optional(crdEntries('must').scope) }));

/** The keys of an account as vendor-driver.yml, the other driver sources and Hello give them: each may be left out. */
export const accountSettingsEntries = {
  name: accountName('must'),
  context: v.optional(must.context),
  ...kubeconfigEntries('must'),
  serviceAccount: v.optional(must.serviceAccount),
  insecure: v.optional(must.insecure),
  noProxy: v.optional(must.noProxy),
  oAuthScopes: v.optional(must.oAuthScopes),
  namespaces: v.optional(must.namespaces),
  omitNamespaces: v.optional(must.omitNamespaces),
  onlyNamespacedResources: v.optional(must.onlyNamespacedResources),
  customResourceDefinitions: v.optional(must.customResourceDefinitions),
  kinds: v.optional(must.kinds),
  omitKinds: v.optional(must.omitKinds),
  clusterScopedKinds: v.optional(must.clusterScopedKinds),
  onlySpinnakerManaged: v.optional(must.onlySpinnakerManaged),
  metrics: v.optional(must.metrics),
  maxResumableResourceAgeMs: v.optional(must.maxResumableResourceAgeMs),
  permissions: v.optional(must.permissions),
};

type GivenSettings = v.InferOutput<v.StrictObjectSchema<typeof accountSettingsEntries, undefined>>;

/**
 * A driver-defined (or announced) account as stored: what was given, no defaults filled in, the
 * kubeconfig spelt `kubeconfigFile` (docs/api.md#the-account-served). Unknown keys are refused.
 */
export const accountSettingsSchema = v.pipe(
  v.strictObject(accountSettingsEntries),
  oneKubeconfigSpelling<GivenSettings>('must', 'kubeconfigFile'),
  v.transform(keepSpelling('kubeconfigFile')),
);

export type AccountSettings = v.InferOutput<typeof accountSettingsSchema>;

/** Every key of an account's settings but its name and kubeconfig, with the defaults filled in. */
export type FullSettings = { [K in keyof Omit<AccountSettings, 'name' | 'kubeconfigFile' | 'customResourceDefinitions'>]-?: NonNullable<AccountSettings[K]> } & {
  customResourceDefinitions: { kind: string; scope: (typeof CRD_SCOPES)[number] }[];
};

/** `settings` with every key left out at its default. */
export function withDefaults(settings: Omit<AccountSettings, 'name'>): FullSettings {
  const d = SETTING_DEFAULTS;
  return {
    context: settings.context ?? d.context,
    serviceAccount: settings.serviceAccount ?? d.serviceAccount,
    insecure: settings.insecure ?? d.insecure,
    noProxy: settings.noProxy ?? d.noProxy,
    oAuthScopes: settings.oAuthScopes ?? d.oAuthScopes,
    namespaces: settings.namespaces ?? d.namespaces,
    omitNamespaces: settings.omitNamespaces ?? d.omitNamespaces,
    onlyNamespacedResources: settings.onlyNamespacedResources ?? d.onlyNamespacedResources,
    customResourceDefinitions: (settings.customResourceDefinitions ?? d.customResourceDefinitions).map((c) => ({ kind: c.kind, scope: c.scope ?? d.crdScope })),
    kinds: settings.kinds ?? d.kinds,
    omitKinds: settings.omitKinds ?? d.omitKinds,
    clusterScopedKinds: settings.clusterScopedKinds ?? d.clusterScopedKinds,
    onlySpinnakerManaged: settings.onlySpinnakerManaged ?? d.onlySpinnakerManaged,
    metrics: settings.metrics ?? d.metrics,
    maxResumableResourceAgeMs: settings.maxResumableResourceAgeMs ?? d.maxResumableResourceAgeMs,
    permissions: settings.permissions ?? d.permissions,
  };
}
