/**
 * fast-check arbitraries for the bodies of cache messages (`resourceEvents`, `resumeQuery`,
 * `podMetrics`) as a hostile caching agent fills them: names at every bound of
 * docs/protocol.md#resource-keys and `PodMetrics` and just past it, names of 3-byte characters,
 * batches that come up to the stream's largest message and just past it, scope sets and health
 * reports of every size, and strings of every kind. The account and the caching epoch are left out:
 * the suite fills them in from what its agent was given.
 *
 * Most bodies keep within every bound, so the driver takes them and the hostile content reaches the
 * writer and the table; the others break one bound or more, and the driver must refuse them by name.
 */
import fc from 'fast-check';
import { agentProtocol } from '../../shared/protocol/loader.ts';
import { hostileString } from './hostile.ts';
import { protoMessage } from './proto-arbitrary.ts';

export type CacheBodyKind = 'resourceEvents' | 'resumeQuery' | 'podMetrics';
type Body = Record<string, unknown>;

/** The bounds the protocol documents (docs/protocol.md#resource-keys, `PodMetrics`). */
const GROUP = 253;
const NAMESPACE = 63;
const NAME = 256;
const SHORT = 64;
const CONTAINERS = 256;
const SYNC_KEYS = 5000;
const STORED_ERROR = 1000;
/** Room left in a message for the account, the epoch and the envelope. */
const HEADROOM = 512;

/** Bytes of `body` as a message of `kind` on the wire. */
function wireBytes(kind: CacheBodyKind, body: Body): number {
  return agentProtocol().vendor.agent.v1.AgentService.service.Connect.requestSerialize({ [kind]: body }).length;
}

/**
 * `make(n)` with `n` chosen so that the message comes to about `bytes`; `make` must give items of
 * one size (padded names), so that the size grows by the same amount for every item.
 */
function filled(kind: CacheBodyKind, make: (n: number) => Body): (bytes: number) => Body {
  let per: number | undefined;
  let base = 0;
  return (bytes) => {
    if (per === undefined) {
      const one = wireBytes(kind, make(1));
      per = wireBytes(kind, make(2)) - one;
      base = one - per;
    }
    return make(Math.max(1, Math.floor((bytes - base) / per)));
  };
}

const padded = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, '0')}`;

/**
 * Names of a kind of thing, within `bound`: plain ones mostly, then ones at the bound or just under,
 * in 3-byte characters (`wide` of them at most, so that a key of such names still fits), hostile
 * strings that fit; past it (`past`): just over the bound, empty where a name is required, any
 * hostile string.
 */
function names(plain: readonly string[], bound: number, wide: number, past: boolean, required = true): fc.Arbitrary<string> {
  const within = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...plain) },
    { weight: 2, arbitrary: fc.constantFrom(bound - 1, bound).map((n) => 'x'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: wide }).map((n) => '界'.repeat(n)) },
    { weight: 1, arbitrary: hostileString.filter((s) => s.length <= bound && (!required || s !== '')) },
  );
  if (!past) return within;
  return fc.oneof(
    { weight: 2, arbitrary: within },
    { weight: 2, arbitrary: fc.constantFrom(bound + 1, bound * 2).map((n) => 'x'.repeat(n)) },
    // A key of names each within its bound, together over 1,024 bytes.
    { weight: 1, arbitrary: fc.constant('界'.repeat(bound)) },
    { weight: 1, arbitrary: required ? fc.constant('') : hostileString },
    { weight: 1, arbitrary: hostileString },
  );
}

function bodies(maxMessageBytes: number, past: boolean): Record<CacheBodyKind, fc.Arbitrary<Body>> {
  // Every name at its bound, one of them wide: 253 + 256 + 63 + 3 * 100 bytes and separators, under 1,024.
  const group = names(['', 'apps', 'argoproj.io'], GROUP, 1, past, false);
  const kind = names(['ConfigMap', 'Pod', 'Deployment', 'Rollout'], NAME, 1, past);
  const namespace = names(['', 'default', 'kube-system'], NAMESPACE, 1, past, false);
  const name = names(['web', 'web-1', 'api'], NAME, 100, past);
  // Within: long strings of which the most a plain body holds still fit one message together.
  const long = past ? 60_000 : 2_000;
  const hostile = past ? hostileString : hostileString.filter((s) => s.length <= long);
  const size = past ? fc.integer({ min: maxMessageBytes + 1, max: maxMessageBytes + 2048 }) : fc.integer({ min: Math.floor(maxMessageBytes / 2), max: maxMessageBytes - HEADROOM });
  const text = (plain: readonly string[]) => fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...plain) }, { weight: 1, arbitrary: hostile });
  const version = fc.oneof({ weight: 4, arbitrary: fc.nat().map(String) }, { weight: 1, arbitrary: hostile });
  const count = fc.oneof({ weight: 4, arbitrary: fc.nat({ max: 5 }) }, { weight: 1, arbitrary: fc.constantFrom(0xffffffff, Number.MAX_SAFE_INTEGER) });
  const age = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -1, max: 60_000 }) }, { weight: 1, arbitrary: fc.constantFrom(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) });
  const positive = past ? fc.oneof(fc.integer({ min: 1, max: 3 }), count) : fc.integer({ min: 1, max: 3 });
  const scope = fc.record({ group, kind, namespace, synthetic: fc.boolean() });

  const change = fc.record({
    group,
    kind,
    namespace,
    name,
    resourceVersion: version,
    deleted: fc.boolean(),
    object: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('{}', '{"metadata":{"name":"web"}}', '') }, { weight: 1, arbitrary: hostile }),
  });
  // Names from a fixed set, so the table the suite compares after every run stays small.
  const manyChanges = filled('resourceEvents', (n) => ({
    changes: Array.from({ length: n }, (_, i) => ({ group: '', kind: 'ConfigMap', namespace: 'default', name: padded('c', i % 3000), resourceVersion: '1', deleted: false, object: '{}' })),
  }));
  const oneLarge = (bytes: number): Body => ({
    changes: [{ group: '', kind: 'ConfigMap', namespace: 'default', name: 'large', resourceVersion: '1', deleted: false, object: JSON.stringify({ data: 'x'.repeat(Math.max(0, bytes - 200)) }) }],
  });
  // Short keys, so that the most a part holds fits a message of 64 KiB.
  const manySyncKeys = (n: number) => fc.constant({ syncs: [{ scope: { group: '', kind: 'Namespace', namespace: '' }, resourceVersion: '1', listId: 1, part: 1, last: true, keys: Array.from({ length: n }, (_, i) => padded('n', i)) }] });
  // One kind in many namespaces: the scope set keeps a kind's namespaces in one item.
  const wideScopeSet = filled('resourceEvents', (n) => ({
    scopeSet: { scopes: Array.from({ length: n }, (_, i) => ({ group: 'apps', kind: 'Deployment', namespace: padded('n'.repeat(NAMESPACE - 5), i), synthetic: false })) },
  }));
  // Thousands of kinds; as empty reports two bytes each on the wire, megabytes as the driver's
  // records (stored compressed, docs/table.md#the-resource-cache).
  const manyKinds = filled('resourceEvents', (n) => ({ health: Array.from({ length: n }, (_, i) => ({ group: 'g', kind: padded('K', i), scopes: 1 })) }));
  const manyEmptyKinds = filled('resourceEvents', (n) => ({ health: Array.from({ length: n }, () => ({})) }));

  const sync = fc.record({
    scope,
    resourceVersion: version,
    listId: fc.nat({ max: 3 }),
    part: positive,
    last: fc.boolean(),
    keys: fc.array(fc.oneof(fc.constantFrom('default/web', 'web', 'default/c00001'), hostile.filter((s) => past || s !== '')), { maxLength: 5 }),
  });
  const health = fc.array(
    protoMessage('KindHealth', { group, kind, objects: count, relists: count, expired: count, lastError: fc.oneof(hostile, fc.constantFrom(STORED_ERROR, STORED_ERROR + 1, long).map((n) => 'e'.repeat(n))), lastEventAgeMs: age, lastErrorAgeMs: age }),
    { maxLength: 3 },
  );
  const clusterStatus = protoMessage('ClusterStatus', {
    reason: fc.oneof(fc.constantFrom('unreachable', 'unauthorized'), hostile, fc.constantFrom(STORED_ERROR + 1, long).map((n) => 'r'.repeat(n))),
    error: fc.oneof(hostile, fc.constantFrom(STORED_ERROR + 1, long).map((n) => 'e'.repeat(n))),
    lastOutageReason: fc.oneof(fc.constant(''), hostile),
    sinceAgeMs: age,
    lastOutageFromAgeMs: age,
    lastOutageUntilAgeMs: age,
  });
  const plainEvents = fc.record(
    {
      changes: fc.array(change, { maxLength: 4 }),
      syncs: fc.array(sync, { maxLength: 2 }),
      progress: fc.array(fc.record({ scope, resourceVersion: version, objects: count }), { maxLength: 3 }),
      scopeSet: fc.record({ scopes: fc.array(scope, { maxLength: 4 }) }),
      health,
      clusterStatus,
      resumeQueryId: count,
    },
    { requiredKeys: [] },
  );
  const resourceEvents = fc.oneof(
    { weight: 8, arbitrary: plainEvents },
    { weight: 1, arbitrary: size.map(manyChanges) },
    { weight: 1, arbitrary: size.map(oneLarge) },
    { weight: 1, arbitrary: size.map(wideScopeSet) },
    { weight: 1, arbitrary: size.map(manyKinds) },
    { weight: 1, arbitrary: size.map(manyEmptyKinds) },
    { weight: 1, arbitrary: (past ? fc.constant(SYNC_KEYS + 1) : fc.constantFrom(SYNC_KEYS - 1, SYNC_KEYS)).chain(manySyncKeys) },
  );

  const resumeQuery = fc.record({
    queryId: positive,
    maxAgeMs: fc.oneof(fc.constantFrom(0, 60_000, 600_000), count),
    cluster: text(['https://10.0.0.1:6443', 'https://10.0.0.1:6443 (labelSelector vendor-agent.io/managed=true)']),
  });

  const container = fc.record({ name: names(['app', 'sidecar'], GROUP, 80, past, false), cpu: names(['12m', '1'], SHORT, 20, past, false), memory: names(['34Mi'], SHORT, 20, past, false) });
  const pod = fc.record({
    namespace: names(['default', 'kube-system'], NAMESPACE, 20, past),
    name,
    timestamp: names(['2026-01-02T03:04:05Z'], SHORT, 20, past, false),
    window: names(['30s'], SHORT, 20, past, false),
    containers: fc.oneof(
      { weight: 5, arbitrary: fc.array(container, { maxLength: 3 }) },
      { weight: 1, arbitrary: (past ? fc.constant(CONTAINERS + 1) : fc.constantFrom(CONTAINERS - 1, CONTAINERS)).map((n) => Array.from({ length: n }, (_, i) => ({ name: padded('c', i), cpu: '1m', memory: '1Ki' }))) },
    ),
  });
  // Many pods of one namespace: a reading up to the largest message.
  const manyPods = filled('podMetrics', (n) => ({
    namespaces: ['default'],
    pods: Array.from({ length: n }, (_, i) => ({ namespace: 'default', name: padded('p', i), timestamp: '2026-01-02T03:04:05Z', window: '30s', containers: [{ name: 'app', cpu: '1m', memory: '1Ki' }] })),
  }));
  const reading = fc.record({ readingId: count, part: positive, last: fc.boolean() });
  const podMetrics = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(reading, fc.record({ namespaces: fc.array(names(['default', 'kube-system'], NAMESPACE, 20, past), { maxLength: 3 }), pods: fc.array(pod, { maxLength: 3 }) })).map(([r, b]) => ({ ...r, ...b })) },
    { weight: 1, arbitrary: fc.tuple(reading, size.map(manyPods)).map(([r, b]) => ({ ...r, ...b })) },
  );
  return { resourceEvents, resumeQuery, podMetrics };
}

/**
 * Hostile bodies of each cache message for a stream that takes messages of up to `maxMessageBytes`:
 * within every bound six times in seven, past one or more the seventh; with `within`, always within.
 */
export function cacheBodies(maxMessageBytes: number, options: { within?: boolean } = {}): Record<CacheBodyKind, fc.Arbitrary<Body>> {
  const within = bodies(maxMessageBytes, false);
  if (options.within === true) return within;
  const past = bodies(maxMessageBytes, true);
  const mix = (kind: CacheBodyKind) => fc.oneof({ weight: 6, arbitrary: within[kind] }, { weight: 1, arbitrary: past[kind] });
  return { resourceEvents: mix('resourceEvents'), resumeQuery: mix('resumeQuery'), podMetrics: mix('podMetrics') };
}
