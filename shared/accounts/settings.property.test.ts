/**
 * One rule for an account's settings wherever an account is defined (docs/agent-config.md#one-rule-for-every-definition):
 * an entry valid in vendor-agent.yml is valid in vendor-driver.yml, in a hello and (its kubeconfig
 * keys) in the API's account records, and the other way round; one invalid in one is invalid in all;
 * and settings survive the protocol's `AccountSettings` with the same defaults at both ends.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig } from '../../agent/config/load.ts';
import type { AccountConfig } from '../../agent/config/schema.ts';
import { staticAccountsForHello } from '../../agent/connection/hello.ts';
import { staticAccountsOf } from '../../driver/account-settings.ts';
import { parseDriverConfig } from '../driver-config/load.ts';
import type { Hello__Output, StaticAccount__Output } from '../protocol/messages.ts';
import { KIND_NAME } from '../operations/kinds.ts';
import { activationRecordSchema, registrationRecordSchema } from './schema.ts';
import { accountSettingsMessage, staticAccountSettings } from './settings-message.ts';
import { accountSettingsSchema, hasWhitespace, MAX_NAME_LENGTH, NAME_PATTERN, withDefaults, type AccountSettings } from './settings.ts';

type Entry = Record<string, unknown>;

const NAMESPACE = /^[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const CRD_KIND = /^[A-Za-z][A-Za-z0-9]{0,8}\.[a-z0-9](?:[-a-z0-9]{0,6}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,6}[a-z0-9])?){1,3}$/;

const name = fc.stringMatching(NAME_PATTERN).filter((s) => s.length <= MAX_NAME_LENGTH);
const filled = fc.string({ minLength: 1, maxLength: 12 });
const path = fc.stringMatching(/^\/[a-z0-9]{1,8}(?:\/[a-z0-9 ._-]{1,12}){0,3}$/).filter((p) => !p.endsWith(' '));
const list = <T>(item: fc.Arbitrary<T>) => fc.array(item, { maxLength: 4 });

/** How to connect: exactly one of the pod's service account and a kubeconfig, under either spelling. */
const connection: fc.Arbitrary<Entry> = fc.oneof(
  fc.constant({ serviceAccount: true }),
  fc.record({ kubeConfigFile: path, serviceAccount: fc.constant(false) }, { requiredKeys: ['kubeConfigFile'] }),
  fc.record({ kubeconfigFile: path, serviceAccount: fc.constant(false) }, { requiredKeys: ['kubeconfigFile'] }),
);

const permission = fc
  .record({ READ: list(filled), WRITE: list(filled) }, { requiredKeys: [] })
  .filter((p) => p.READ !== undefined || p.WRITE !== undefined);

/** A `kubernetes.accounts[]` entry every rule accepts, with any key left out. */
const validEntry: fc.Arbitrary<Entry> = fc
  .tuple(
    name,
    connection,
    fc.record(
      {
        context: fc.string({ maxLength: 8 }),
        insecure: fc.boolean(),
        noProxy: fc.boolean(),
        oAuthScopes: list(filled),
        namespaces: list(fc.stringMatching(NAMESPACE)),
        omitNamespaces: list(filled),
        onlyNamespacedResources: fc.boolean(),
        customResourceDefinitions: list(fc.record({ kind: fc.stringMatching(CRD_KIND), scope: fc.constantFrom('Namespaced', 'Cluster') }, { requiredKeys: ['kind'] })),
        kinds: list(filled),
        omitKinds: list(filled),
        clusterScopedKinds: list(fc.stringMatching(KIND_NAME).filter((k) => k !== 'Namespace')),
        onlySpinnakerManaged: fc.boolean(),
        metrics: fc.boolean(),
        maxResumableResourceAgeMs: fc.oneof(fc.constant(1), fc.constant(300_000), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.constant(Number.MAX_SAFE_INTEGER)),
        permissions: list(permission),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([n, how, rest]) => ({ name: n, ...how, ...rest }));

function agentFile(entry: Entry) {
  return parseConfig(stringify({ kubernetes: { accounts: [entry] } }), 'vendor-agent.yml');
}

function driverFile(entry: Entry): AccountSettings | Error {
  try {
    return parseDriverConfig(stringify({ kubernetes: { accounts: [entry] } }), 'vendor-driver.yml').kubernetes.accounts[0]!;
  } catch (e) {
    return e as Error;
  }
}

function hello(accounts: StaticAccount__Output[]): Hello__Output {
  return { protocolVersion: 1, agentId: 'a-1', zone: '', agentVersion: 'test', staticAccounts: accounts, heldAccounts: [], previousSessionId: '' };
}

/** What the driver records of a hello's static accounts, and what it left out. */
function recorded(accounts: StaticAccount__Output[]): { kept: AccountSettings[]; refused: string[] } {
  const refused: string[] = [];
  const kept = staticAccountsOf(hello(accounts), (problem) => refused.push(problem));
  return { kept, refused };
}

/** The API record carrying an entry's name and kubeconfig key, as POST and PATCH take them. */
function apiRecords(entry: Entry): Entry[] {
  const kubeconfig = Object.fromEntries(Object.entries(entry).filter(([k]) => k === 'kubeconfigFile' || k === 'kubeConfigFile'));
  return [{ name: entry['name'], ...kubeconfig }, { name: entry['name'], ...kubeconfig, state: 'ACTIVE' }];
}

function apiAccepts(record: Entry): boolean {
  const schema = 'state' in record ? activationRecordSchema : registrationRecordSchema;
  return v.safeParse(schema, record).success;
}

const merged = (permissions: readonly { READ?: string[] | undefined; WRITE?: string[] | undefined }[]) => ({
  READ: [...new Set(permissions.flatMap((p) => p.READ ?? []))],
  WRITE: [...new Set(permissions.flatMap((p) => p.WRITE ?? []))],
});

/**
 * What an account's settings mean once defaults are applied: the keys the protocol carries (not the
 * kubeconfig), permissions merged over their entries. A role name with
 * whitespace switches permissions off (docs/agent-config.md#permissions), so they then count as none.
 */
function meaning(settings: Omit<AccountSettings, 'name'>) {
  const { permissions, ...rest } = withDefaults(settings);
  const roles = merged(permissions);
  const ignored = [...roles.READ, ...roles.WRITE].some(hasWhitespace);
  return { ...rest, permissions: ignored ? { READ: [], WRITE: [] } : roles };
}

function agentMeaning(account: AccountConfig) {
  const { name: _name, kubeConfigFile: _kubeconfig, permissionsIgnored: _ignored, ...rest } = account;
  return rest;
}

function helloOf(accounts: readonly AccountConfig[]): StaticAccount__Output[] {
  // As the agent's connection builds its hello: each account's merged permissions as one entry.
  return staticAccountsForHello(accounts.map((a) => ({ ...a, permissions: [a.permissions] }))) as StaticAccount__Output[];
}

describe('an account valid in one place is valid in all, and keeps its meaning across the protocol', () => {
  it('agent file, driver file, hello and API records accept the same entry, with the same defaults', () => {
    fc.assert(
      fc.property(validEntry, (entry) => {
        const agent = agentFile(entry);
        expect(agent.problems).toEqual([]);
        const own = agent.config!.kubernetes.accounts[0]!;
        const driver = driverFile(entry);
        expect(driver).not.toBeInstanceOf(Error);
        const defined = driver as AccountSettings;
        for (const record of apiRecords(entry)) expect(apiAccepts(record)).toBe(true);

        // The same key read the same way: the kubeconfig under either spelling, every default alike.
        expect(own.kubeConfigFile).toBe(defined.kubeconfigFile);
        expect(own.onlySpinnakerManaged).toBe(withDefaults(defined).onlySpinnakerManaged);
        expect(agentMeaning(own)).toEqual(meaning(defined));

        // The agent's hello: nothing is left out, and what is recorded means what the file says.
        const { kept, refused } = recorded(helloOf([own]));
        expect(refused).toEqual([]);
        expect(kept.map((k) => k.name)).toEqual([own.name]);
        expect(meaning(kept[0]!)).toEqual(agentMeaning(own));

        // A driver definition sent in an assignment and read back: unchanged once defaults apply.
        const { name: _name, kubeconfigFile: _kubeconfig, ...settings } = defined;
        const back = v.parse(accountSettingsSchema, staticAccountSettings({ name: defined.name, settings: accountSettingsMessage(settings) }));
        expect(meaning(back)).toEqual(meaning(defined));
        expect(accountSettingsMessage(back)).toEqual(accountSettingsMessage(settings));
      }),
      { numRuns: 300 },
    );
  });
});

/** One value a rule refuses, at `key` of an otherwise valid entry; `wire` when the protocol can carry it. */
interface Breakage {
  key: string;
  value: unknown;
  wire: boolean;
}

const notMatching = (re: RegExp) => fc.string({ maxLength: 20 }).filter((s) => !re.test(s));

const breakage: fc.Arbitrary<Breakage> = fc.oneof(
  fc.record({ key: fc.constant('name'), value: fc.oneof(notMatching(NAME_PATTERN), fc.constant('n'.repeat(MAX_NAME_LENGTH + 1))), wire: fc.constant(true) }),
  fc.record({ key: fc.constant('namespaces'), value: notMatching(NAMESPACE).map((n) => ['ok', n]), wire: fc.constant(true) }),
  fc.record({
    key: fc.constant('customResourceDefinitions'),
    value: fc.oneof(
      notMatching(/^[A-Za-z][A-Za-z0-9]*\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)+$/).map((kind) => [{ kind }]),
      fc.constantFrom('cluster', 'namespaced', 'All').map((scope) => [{ kind: 'Rollout.argoproj.io', scope }]),
    ),
    wire: fc.constant(true),
  }),
  fc.record({ key: fc.constant('clusterScopedKinds'), value: fc.oneof(notMatching(KIND_NAME), fc.constant('Namespace')).map((k) => [k]), wire: fc.constant(true) }),
  fc.record({ key: fc.constantFrom('oAuthScopes', 'omitNamespaces', 'kinds', 'omitKinds'), value: fc.constant(['ok', '']), wire: fc.constant(true) }),
  fc.record({ key: fc.constant('permissions'), value: fc.constantFrom([{ READ: [''] }], [{ WRITE: ['ops', ''] }]), wire: fc.constant(true) }),
  fc.record({ key: fc.constant('permissions'), value: fc.constantFrom([{ Read: ['dev'] }], [{}], [{ READ: 'dev' }], ['READ']), wire: fc.constant(false) }),
  fc.record({ key: fc.constant('maxResumableResourceAgeMs'), value: fc.constantFrom(1.5, Number.MAX_SAFE_INTEGER + 2), wire: fc.constant(true) }),
  fc.record({ key: fc.constant('maxResumableResourceAgeMs'), value: fc.constantFrom(-1, 0, '60000'), wire: fc.constant(false) }),
  fc.record({ key: fc.constantFrom('insecure', 'noProxy', 'metrics', 'onlyNamespacedResources', 'onlySpinnakerManaged'), value: fc.constantFrom(5, 'yes', { a: 1 }), wire: fc.constant(false) }),
  fc.record({ key: fc.constantFrom('context', 'namespaces', 'permissions'), value: fc.constantFrom(5, true, { a: 1 }), wire: fc.constant(false) }),
);

/** Kubeconfig values refused everywhere a kubeconfig key is taken; none ever travels in the protocol. */
const badKubeconfig = fc.constantFrom('', 'apiVersion: v1', '{"clusters": []}', 'token: abc', 'encryptedFile:nosuchengine!x:y', `/${'k'.repeat(5000)}`);

describe('a value invalid in one place is invalid in all', () => {
  it('agent file, driver file and hello refuse the same values', () => {
    fc.assert(
      fc.property(validEntry, breakage, (entry, { key, value, wire }) => {
        const broken = { ...entry, [key]: value };
        expect(agentFile(broken).problems.map((p) => p.path)).toContainEqual(expect.stringMatching(new RegExp(`^kubernetes\\.accounts\\[0\\]\\.${key}\\b`)));
        expect(driverFile(broken)).toBeInstanceOf(Error);
        if (!wire) return;
        // What the driver receives when an agent announces the broken entry: left out, with a log line.
        const settings = accountSettingsMessage(broken as Omit<AccountSettings, 'name'>);
        const { kept, refused } = recorded([{ name: String(broken['name']), settings }]);
        expect(kept).toEqual([]);
        expect(refused).toHaveLength(1);
      }),
      { numRuns: 300 },
    );
  });

  it('agent file, driver file and API records refuse the same kubeconfig values, and both spellings at once', () => {
    fc.assert(
      fc.property(name, badKubeconfig, fc.constantFrom('kubeConfigFile', 'kubeconfigFile'), (n, reference, spelling) => {
        const entry = { name: n, [spelling]: reference };
        expect(agentFile(entry).problems.map((p) => p.path)).toContain(`kubernetes.accounts[0].${spelling}`);
        expect(driverFile(entry)).toBeInstanceOf(Error);
        for (const record of apiRecords(entry)) expect(apiAccepts(record)).toBe(false);
      }),
    );
    fc.assert(
      fc.property(name, path, path, (n, a, b) => {
        const entry = { name: n, kubeConfigFile: a, kubeconfigFile: b };
        expect(agentFile(entry).problems.map((p) => p.path)).toContain('kubernetes.accounts[0].kubeconfigFile');
        expect(driverFile(entry)).toBeInstanceOf(Error);
        for (const record of apiRecords(entry)) expect(apiAccepts(record)).toBe(false);
      }),
    );
  });
});
