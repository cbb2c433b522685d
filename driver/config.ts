/**
 * The driver's gRPC section of `vendor-driver.yml`: where it listens, how agents authenticate,
 * TLS, keepalive policy and session timing. Every key has a default except the credentials.
 */
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { parseDriverConfig } from '../shared/driver-config/load.ts';
import { driverConfigSchemaWith } from '../shared/driver-config/schema.ts';
import { VendorError, type Issue } from '../shared/errors.ts';
import { allowanceEntries, identityNameSchema } from '../shared/agents/schema.ts';
import { digestForm, issuedTokenId, tokenDigest } from '../shared/agents/tokens.ts';
import { OperationsConfigSchema } from './operations/config.ts';
import { wakeSectionSchema } from './wake/config.ts';

const int = (min: number, max: number) =>
  v.pipe(v.number(), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));
const path = v.pipe(v.string(), v.nonEmpty('must be a file path'));

export const MIN_TOKEN_LENGTH = 16;

const KeepaliveSchema = v.strictObject({
  /** The driver pings every connection this often, to find dead peers. */
  timeMs: v.optional(int(1000, 86_400_000), 60_000),
  /** ... and drops it when the ping is not answered within this. */
  timeoutMs: v.optional(int(100, 600_000), 20_000),
  /** Agents may ping at most this often; faster pings are strikes. */
  minPingIntervalMs: v.optional(int(0, 86_400_000), 5_000),
  /** Whether agents may ping a connection that has no open stream. */
  permitWithoutCalls: v.optional(v.boolean(), false),
  /** Strikes tolerated before the connection is closed with GOAWAY `too_many_pings`. */
  maxPingStrikes: v.optional(int(0, 100), 2),
});

const TlsSchema = v.strictObject({
  certFile: path,
  keyFile: path,
  keyFilePassword: v.optional(v.string('must be a string')),
  /** When set, agents must present a client certificate signed by one of these CAs (mTLS). */
  clientCaFile: v.optional(path),
});

/**
 * How driver replicas pick up and repair assignments (docs/protocol.md, "Assignment"). The bounds an
 * operator can rely on follow from these values.
 */
const AssignmentSchema = v.strictObject({
  /** Every replica reads the assignment work feed this often: a PATCH or DELETE is picked up within it. */
  pollIntervalMs: v.optional(int(10, 60_000), 250),
  /** Each feed read starts this far before the newest entry already seen, for writers whose clocks lag. */
  clockSkewMs: v.optional(int(0, 600_000), 5_000),
  /** Every replica compares every account with what its agents hold this often, repairing what the feed missed. */
  fullReconcileIntervalMs: v.optional(int(1_000, 86_400_000), 60_000),
  /** An agent whose session ended keeps its accounts and caching role this long, so a reconnect changes nothing. */
  handoverGraceMs: v.optional(int(0, 3_600_000), 10_000),
  /** How often the session items are read to find agents that are gone (ended, or lease expired with a replica). */
  sweepIntervalMs: v.optional(int(10, 600_000), 2_000),
  /** Accounts reconciled at the same time by one replica. */
  concurrency: v.optional(int(1, 1024), 16),
});

const tokenEntry = v.pipe(
  v.string('must be a string'),
  v.minLength(MIN_TOKEN_LENGTH, `must be at least ${MIN_TOKEN_LENGTH} characters`),
  v.regex(/^\S+$/, 'must not contain white space'),
  v.check((t) => !t.startsWith('sha256:') || digestForm(t) !== undefined, 'a digest is sha256: and 64 lower-case hex digits'),
  // Such a token is always judged against its item in the table, so listing it here would never work.
  v.check((t) => issuedTokenId(t) === undefined, 'is a token issued through the API (vat_...), which the table holds; it does not belong here'),
);

/**
 * An agent identity of the file (`auth.identities[]`): its allowances, and the tokens that speak for
 * it, each the token itself or `sha256:<64 hex digits>` of it, so the file need not hold the secret.
 */
const FileIdentitySchema = v.strictObject({
  name: identityNameSchema,
  ...allowanceEntries,
  tokens: v.optional(v.array(tokenEntry, 'must be a list of tokens or sha256: digests'), []),
});

export type FileIdentity = v.InferOutput<typeof FileIdentitySchema>;

/** The hex SHA-256 a token entry stands for: the digest it names, or the digest of the token it is. */
export function entryDigest(entry: string): string {
  return digestForm(entry) ?? tokenDigest(entry);
}

const AuthSchema = v.pipe(
  v.strictObject({
    /**
     * Fleet-wide bearer tokens: each lets its holder act as any agent. Refused in production mode;
     * elsewhere accepted with a warning at start (docs/protocol.md, "Authentication").
     */
    tokens: v.optional(v.array(tokenEntry, 'must be a list of tokens'), []),
    /** Agent identities and their tokens, besides those kept in the table. */
    identities: v.optional(v.array(FileIdentitySchema, 'must be a list of identities'), []),
    /** Streams one identity may hold open on one replica; more are refused with RESOURCE_EXHAUSTED. */
    maxStreamsPerIdentity: v.optional(int(1, 1_000_000), 100),
    /** How often each replica checks its streams' credentials against the table (revocation, expiry, changed allowances). */
    recheckIntervalMs: v.optional(int(100, 600_000), 2_000),
    /** Whether a client certificate without an identity URI names its identity by its subject CN instead. */
    certificateCommonName: v.optional(v.boolean('must be true or false'), false),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const auth = dataset.value;
    // Valibot's issue path: one item per key from the section down, each with the value it holds.
    const at = (...keys: (string | number)[]) => {
      let input: unknown = auth;
      return keys.map((key) => {
        const value = (input as Record<string | number, unknown>)[key];
        const item = { type: typeof key === 'number' ? 'array' : 'object', origin: 'value', input, key, value };
        input = value;
        return item;
      }) as unknown as [v.ObjectPathItem];
    };
    const names = new Set<string>();
    const owners = new Map<string, string>();
    for (const t of auth.tokens) owners.set(entryDigest(t), 'auth.tokens');
    auth.identities.forEach((identity, i) => {
      if (names.has(identity.name)) addIssue({ message: 'is the name of an identity listed before', path: at('identities', i, 'name') });
      names.add(identity.name);
      identity.tokens.forEach((t, j) => {
        const owner = owners.get(entryDigest(t));
        if (owner !== undefined && owner !== identity.name) {
          addIssue({ message: `is also a token of ${owner === 'auth.tokens' ? 'auth.tokens' : 'another identity'}`, path: at('identities', i, 'tokens', j) });
        }
        owners.set(entryDigest(t), identity.name);
      });
    });
  }),
);

export const driverSectionEntries = {
  grpc: v.optional(
    v.strictObject({
      host: v.optional(v.pipe(v.string(), v.nonEmpty('must be a host name or address')), '0.0.0.0'),
      port: v.optional(int(0, 65_535), 9091),
      /** Largest message accepted from or sent to an agent. */
      maxMessageBytes: v.optional(int(1024, 256 * 1024 * 1024), 4 * 1024 * 1024),
      keepalive: v.optional(KeepaliveSchema, {}),
      tls: v.optional(TlsSchema),
      /** Agent streams one replica holds open at most; more are refused with RESOURCE_EXHAUSTED. */
      maxStreams: v.optional(int(1, 1_000_000), 10_000),
      /**
       * A load balancer in front terminates TLS and forwards plaintext: listening without `tls` on an
       * address other than loopback is then allowed in production mode.
       */
      behindTlsProxy: v.optional(v.boolean('must be true or false'), false),
    }),
    {},
  ),
  auth: v.optional(AuthSchema, {}),
  sessions: v.optional(
    v.pipe(
      v.strictObject({
        heartbeatIntervalMs: v.optional(int(100, 600_000), 10_000),
        leaseMs: v.optional(int(200, 3_600_000), 30_000),
      }),
      v.forward(
        v.check((s) => s.leaseMs > s.heartbeatIntervalMs, 'must be longer than sessions.heartbeatIntervalMs'),
        ['leaseMs'],
      ),
    ),
    {},
  ),
  assignment: v.optional(AssignmentSchema, {}),
  /** Dispatch and timeouts of deployment operations (docs/operations.md). */
  operations: v.optional(OperationsConfigSchema, {}),
};

/** Sections of the file the driver reads besides its endpoint's (driver/main.ts). */
const driverProcessEntries = {
  /** The replica's wake endpoint (docs/protocol.md#6b-wakes). */
  wake: v.optional(wakeSectionSchema, {}),
};

// No check that the file names some credential: tokens issued through the API, kept in the table,
// authenticate agents of a driver whose file names none.
export const DriverGrpcConfigSchema = v.strictObject(driverSectionEntries);

export type DriverGrpcConfig = v.InferOutput<typeof DriverGrpcConfigSchema>;

/**
 * Validates the section. The error names each bad key path and what is allowed, never the value,
 * because some of these values are tokens and key passwords.
 */
export function parseDriverGrpcConfig(input: unknown): DriverGrpcConfig {
  const result = v.safeParse(DriverGrpcConfigSchema, input);
  if (result.success) return result.output;
  const issues: Issue[] = result.issues.map((i) => ({ path: v.getDotPath(i) ?? '', message: i.message }));
  throw new VendorError(
    'invalid_input',
    `invalid driver configuration: ${issues.map((i) => (i.path ? `${i.path} ${i.message}` : i.message)).join('; ')}`,
    { issues },
  );
}

/**
 * The whole `vendor-driver.yml`: the driver-defined accounts (`kubernetes.accounts[]`) and the
 * driver's own sections above, as one strict object, checked again by `endpointConfig()` once
 * identities from elsewhere have joined the file's.
 */
export const driverFileSchema = driverConfigSchemaWith({ ...driverSectionEntries, ...driverProcessEntries });

export type DriverFile = v.InferOutput<typeof driverFileSchema>;

export function parseDriverFile(text: string, file: string): DriverFile {
  return parseDriverConfig(text, file, driverFileSchema);
}

export async function loadDriverFile(file: string): Promise<DriverFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new VendorError('invalid_input', `cannot read driver config ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, { cause });
  }
  return parseDriverFile(text, file);
}

/** The endpoint settings of a file, with identities from elsewhere (`npm start`'s local one) accepted too. */
export function endpointConfig(file: DriverFile, extraIdentities: readonly FileIdentity[] = []): DriverGrpcConfig {
  const { grpc, auth, sessions, assignment, operations } = file;
  return parseDriverGrpcConfig({
    grpc,
    sessions,
    assignment,
    operations,
    auth: { ...auth, identities: [...auth.identities, ...extraIdentities] },
  });
}
