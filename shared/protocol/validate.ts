/**
 * Validation of received messages, once, where they enter. The decoder already guarantees field
 * types; these schemas add what the `.proto` cannot say (required ids, positive generations,
 * sequence numbers only on reliable messages) and turn the message into an envelope whose `kind`
 * names its one body.
 */
import * as v from 'valibot';
import type { Issue } from '../errors.ts';
import {
  RELIABLE_AGENT_BODIES,
  RELIABLE_DRIVER_BODIES,
  type AgentBodyKind,
  type AgentEnvelope,
  type AgentMessage__Output,
  type DriverBodyKind,
  type DriverEnvelope,
  type DriverMessage__Output,
} from './messages.ts';
import { protocolError } from './problems.ts';
import { MAX_ACKED_AHEAD } from './sequencing.ts';
import { MAX_STATIC_ACCOUNTS } from '../accounts/model.ts';
import { MAX_MANIFESTS, MAX_TARGETS } from '../operations/request.ts';
import { fitsSortKey, MAX_SORT_KEY_BYTES, progressSk, resourceSk, scopeSetKindSk } from '../table/resources/keys.ts';
import { MAX_SCOPE_SET_KIND_BYTES, scopeSetFits } from '../table/resources/scope-set-kinds.ts';

const MAX_ID = 256;
const MAX_TEXT = 8192;

/** An id or name the peer reads from a message: what the driver requires of an operation result's. */
export const protocolIdSchema = v.pipe(v.string(), v.nonEmpty('is required'), v.maxLength(MAX_ID, `is longer than ${MAX_ID} characters`));
/** A count that starts at 1 (generations, attempts, parts). */
export const protocolPositiveSchema = v.pipe(v.number(), v.integer(), v.minValue(1, 'must be at least 1'));
const id = protocolIdSchema;
const positive = protocolPositiveSchema;
/** A compact object is about 1 KB; anything near this is not compact and is refused by name. */
const MAX_OBJECT = 64 * 1024;
/**
 * Kubernetes' own bounds on what names a cached object (docs/protocol.md#resource-keys): an API group
 * is a DNS subdomain, a namespace a DNS label. With them, and the key's size checked where it is
 * built from the names, nothing the driver takes makes a table key the table refuses on every try.
 */
const MAX_GROUP = 253;
const MAX_NAMESPACE = 63;
const apiGroup = v.pipe(v.string(), v.maxLength(MAX_GROUP, `is longer than ${MAX_GROUP} characters`));
const namespace = v.pipe(v.string(), v.maxLength(MAX_NAMESPACE, `is longer than ${MAX_NAMESPACE} characters`));
/** A quantity or a time as the metrics API gives them (`12m`, `34Mi`, `2026-01-02T03:04:05Z`, `30s`). */
const MAX_SHORT = 64;
const short = v.pipe(v.string(), v.maxLength(MAX_SHORT, `is longer than ${MAX_SHORT} characters`));
const MAX_CONTAINERS = 256;
/** Most kinds one health report names: every kind a cluster serves, its custom ones included, is far fewer. */
export const MAX_HEALTH_KINDS = 10_000;

/**
 * Whether the driver takes a kind's health entry (`ResourceEvents.health`): a kind named as a kind is
 * (not empty, at most 256 characters) of a group Kubernetes could have (at most 253). The agent leaves
 * out of its report a kind a cluster names otherwise, since the driver would refuse the whole batch.
 */
export function kindHealthFits(k: { group: string; kind: string }): boolean {
  return k.kind !== '' && k.kind.length <= MAX_ID && k.group.length <= MAX_GROUP;
}
/**
 * Whether names of this many UTF-16 units fit a key however wide their characters: a unit is at most
 * 3 bytes of UTF-8, and a key adds at most 16 of its own. Most names are far inside, and need no key built.
 */
const fitAtAnyWidth = (units: number): boolean => units * 3 + 16 <= MAX_SORT_KEY_BYTES;
/** Whether names make a key the table takes. */
const keyFits = (names: readonly string[], key: () => string): boolean => fitAtAnyWidth(names.reduce((n, s) => n + s.length, 0)) || fitsSortKey(key());
const tooLongKey = `make a table key longer than ${MAX_SORT_KEY_BYTES} bytes`;
const scopeRef = v.pipe(
  v.looseObject({ group: apiGroup, kind: id, namespace }),
  v.check((s) => keyFits([s.group, s.kind, s.namespace], () => progressSk(s)) && keyFits([s.group, s.kind, s.namespace], () => scopeSetKindSk(s)), `group, kind and namespace together ${tooLongKey}`),
);
const resourceChange = v.pipe(
  v.looseObject({ group: apiGroup, kind: id, namespace, name: id, object: v.pipe(v.string(), v.maxLength(MAX_OBJECT)) }),
  v.check((c) => keyFits([c.group, c.kind, c.namespace, c.name], () => resourceSk(c)), `group, kind, namespace and name together ${tooLongKey}`),
);

const uniqueNames = <T extends { name: string }>(list: T[]): boolean =>
  new Set(list.map((a) => a.name)).size === list.length;

/** What a change holds that names its object, and the object. */
export interface ResourceChangeNames {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  object: string;
}

/**
 * Why the driver would refuse this change, or undefined when it takes it: the agent leaves out an
 * object the driver cannot store rather than have the driver refuse the whole batch it is in.
 */
export function resourceChangeProblem(c: ResourceChangeNames): string | undefined {
  // Almost every object is far inside each bound: taken without the schema, on the agent's path of every change.
  const named = c.kind !== '' && c.name !== '' && c.kind.length <= MAX_ID && c.name.length <= MAX_ID;
  const fits = fitAtAnyWidth(c.group.length + c.kind.length + c.namespace.length + c.name.length);
  if (named && fits && c.group.length <= MAX_GROUP && c.namespace.length <= MAX_NAMESPACE && c.object.length <= MAX_OBJECT) return undefined;
  const result = v.safeParse(resourceChange, c);
  return result.success ? undefined : result.issues.map((i) => [v.getDotPath(i), i.message].filter(Boolean).join(' ')).join('; ');
}

const MAX_OUTCOMES = Math.max(MAX_MANIFESTS, MAX_TARGETS);

const AGENT_BODIES: Record<AgentBodyKind, v.GenericSchema> = {
  hello: v.looseObject({
    protocolVersion: v.number(),
    agentId: id,
    zone: v.pipe(v.string(), v.maxLength(MAX_ID)),
    agentVersion: v.pipe(v.string(), v.maxLength(MAX_ID)),
    staticAccounts: v.pipe(
      v.array(v.looseObject({ name: id })),
      v.maxLength(MAX_STATIC_ACCOUNTS, `holds more than ${MAX_STATIC_ACCOUNTS} accounts, the most an agent defines`),
      v.check((list) => uniqueNames(list), 'names an account twice'),
    ),
    heldAccounts: v.pipe(
      v.array(v.looseObject({ name: id, generation: positive })),
      v.check((list) => uniqueNames(list), 'names an account twice'),
    ),
    previousSessionId: v.pipe(v.string(), v.maxLength(MAX_ID)),
  }),
  heartbeat: v.looseObject({}),
  ack: v.looseObject({}),
  assignmentResult: v.looseObject({
    account: id,
    generation: positive,
    message: v.pipe(v.string(), v.maxLength(MAX_TEXT)),
  }),
  resourceEvents: v.looseObject({
    account: id,
    changes: v.array(resourceChange),
    health: v.pipe(
      v.array(v.looseObject({ group: apiGroup, kind: id })),
      v.maxLength(MAX_HEALTH_KINDS, `names more than ${MAX_HEALTH_KINDS} kinds, more than a cluster serves`),
    ),
    syncs: v.array(v.looseObject({ scope: scopeRef, part: positive, keys: v.array(v.pipe(v.string(), v.nonEmpty('is empty'))) })),
    progress: v.array(v.looseObject({ scope: scopeRef })),
    scopeSet: v.nullish(
      v.looseObject({
        scopes: v.pipe(v.array(scopeRef), v.check((scopes) => scopeSetFits(scopes), `holds a kind whose namespaces are more than ${MAX_SCOPE_SET_KIND_BYTES} bytes`)),
      }),
    ),
  }),
  resumeQuery: v.looseObject({ queryId: positive, account: id }),
  operationResult: v.looseObject({
    operationId: id,
    account: id,
    attempt: positive,
    message: v.pipe(v.string(), v.maxLength(MAX_TEXT)),
    // One per manifest or target of the operation: more cannot be a result of one, and would not fit its item.
    outcomes: v.pipe(
      v.array(v.looseObject({ result: v.pipe(v.string(), v.nonEmpty('is required')), message: v.pipe(v.string(), v.maxLength(MAX_TEXT)) })),
      v.maxLength(MAX_OUTCOMES, `has more than ${MAX_OUTCOMES} outcomes, more than any operation has objects`),
    ),
  }),
  podMetrics: v.looseObject({
    account: id,
    namespaces: v.array(v.pipe(namespace, v.nonEmpty('is required'))),
    // Bounded so that one pod's metrics always fit a table item (docs/table.md, pod metrics).
    pods: v.array(
      v.looseObject({
        namespace: v.pipe(namespace, v.nonEmpty('is required')),
        name: id,
        timestamp: short,
        window: short,
        containers: v.pipe(
          v.array(v.looseObject({ name: v.pipe(v.string(), v.maxLength(MAX_GROUP, `is longer than ${MAX_GROUP} characters`)), cpu: short, memory: short })),
          v.maxLength(MAX_CONTAINERS, `has more than ${MAX_CONTAINERS} containers`),
        ),
      }),
    ),
  }),
};

const DRIVER_BODIES: Record<DriverBodyKind, v.GenericSchema> = {
  welcome: v.pipe(
    v.looseObject({
      sessionId: id,
      driverReplicaId: id,
      protocolVersion: v.number(),
      heartbeatIntervalMs: positive,
      leaseMs: positive,
    }),
    v.check((w) => w.leaseMs > w.heartbeatIntervalMs, 'leaseMs must be longer than heartbeatIntervalMs'),
  ),
  heartbeatAck: v.looseObject({}),
  ack: v.looseObject({}),
  assignAccount: v.looseObject({ account: id, generation: positive }),
  removeAccount: v.looseObject({ account: id, generation: positive }),
  resumeInfo: v.looseObject({ queryId: positive, account: id }),
  // The agent checks each operation itself and refuses a bad one as that operation's result: a bad
  // operation costs itself only, never the stream and every account on it (docs/operations.md#operations-the-agent-refuses).
  operation: v.looseObject({}),
};

/** Bodies whose receiver checks every field, numbers included, and refuses a bad one on its own. */
const CHECKED_BY_RECEIVER: ReadonlySet<string> = new Set<DriverBodyKind>(['operation']);

/**
 * Where a body holds a number above 2^53 - 1, if anywhere. 64-bit fields arrive as JavaScript
 * numbers (options.ts), which hold such values only approximately, and the table client refuses to
 * write them: one is a peer's mistake to refuse by name, not an internal error later.
 */
function unsafeNumberAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) || !Number.isInteger(value) ? undefined : path;
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const found = unsafeNumberAt(inner, `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Issues a refusal names; the count of the others follows them. */
const MAX_NAMED_ISSUES = 10;

interface RawEnvelope {
  seq: number;
  ackSeq: number;
  body?: string;
}

function parseEnvelope<K extends string>(
  raw: RawEnvelope,
  schemas: Record<K, v.GenericSchema>,
  reliable: ReadonlySet<K>,
): { seq: number; ackSeq: number; kind: K; body: unknown } {
  const kind = raw.body as K | undefined;
  if (kind === undefined || !(kind in schemas)) throw protocolError('malformed', 'message has no body');
  const body = (raw as unknown as Record<K, unknown>)[kind];
  const result = v.safeParse(schemas[kind], body);
  if (!result.success) {
    const issues: Issue[] = result.issues.map((i) => ({
      path: [kind, v.getDotPath(i)].filter(Boolean).join('.'),
      message: i.message,
    }));
    // The first few name the problem; a message with thousands of bad fields would otherwise make a
    // refusal as long as the message itself.
    const named = issues.slice(0, MAX_NAMED_ISSUES).map((i) => `${i.path} ${i.message}`).join('; ');
    const more = issues.length > MAX_NAMED_ISSUES ? `; and ${issues.length - MAX_NAMED_ISSUES} more` : '';
    throw protocolError('malformed', `malformed ${kind}: ${named}${more}`, { issues: issues.slice(0, MAX_NAMED_ISSUES) });
  }
  const unsafe = CHECKED_BY_RECEIVER.has(kind) ? undefined : unsafeNumberAt(body, kind);
  if (unsafe !== undefined) {
    const issues: Issue[] = [{ path: unsafe, message: 'is larger than 2^53 - 1' }];
    throw protocolError('malformed', `malformed ${kind}: ${unsafe} is larger than 2^53 - 1`, { issues });
  }
  if (reliable.has(kind) && raw.seq === 0) throw protocolError('malformed', `${kind} must carry a sequence number`);
  if (!reliable.has(kind) && raw.seq !== 0) throw protocolError('malformed', `${kind} must not carry a sequence number`);
  return { seq: raw.seq, ackSeq: raw.ackSeq, kind, body };
}

/** Checks a message received from an agent; throws a `protocol_error` naming what is wrong. */
export function parseAgentMessage(raw: AgentMessage__Output): AgentEnvelope {
  return parseEnvelope(raw, AGENT_BODIES, RELIABLE_AGENT_BODIES) as AgentEnvelope;
}

/** Checks a message received from the driver; throws a `protocol_error` naming what is wrong. */
export function parseDriverMessage(raw: DriverMessage__Output): DriverEnvelope {
  const env = parseEnvelope(raw, DRIVER_BODIES, RELIABLE_DRIVER_BODIES) as DriverEnvelope;
  const ahead = raw.ackedAhead ?? [];
  if (ahead.length > MAX_ACKED_AHEAD) {
    throw protocolError('malformed', `acked_ahead lists ${ahead.length} messages, more than ${MAX_ACKED_AHEAD}`);
  }
  // Whether each was sent and not acknowledged is the sequencing's to say (`bad_ack`).
  for (const seq of ahead) {
    if (!Number.isSafeInteger(seq) || seq < 1) throw protocolError('malformed', `acked_ahead holds ${seq}, not a sequence number`);
  }
  env.ackedAhead = ahead;
  return env;
}
