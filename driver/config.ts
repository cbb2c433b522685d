/**
 * The driver's gRPC section of `vendor-driver.yml`: where it listens, how agents authenticate,
 * TLS, keepalive policy and session timing. Every key has a default except the credentials.
 */
import { readFile } from 'node:fs/promises';
import * as v from 'valibot';
import { parseDriverConfig } from '../shared/driver-config/load.ts';
import { driverConfigSchemaWith } from '../shared/driver-config/schema.ts';
import { VendorError, type Issue } from '../shared/errors.ts';
import { SST_LINKS, linkedField } from '../shared/links.ts';
import { OperationsConfigSchema } from './operations/config.ts';

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

export const driverSectionEntries = {
  grpc: v.optional(
    v.strictObject({
      host: v.optional(v.pipe(v.string(), v.nonEmpty('must be a host name or address')), '0.0.0.0'),
      port: v.optional(int(0, 65_535), 9091),
      /** Largest message accepted from or sent to an agent. */
      maxMessageBytes: v.optional(int(1024, 256 * 1024 * 1024), 4 * 1024 * 1024),
      keepalive: v.optional(KeepaliveSchema, {}),
      tls: v.optional(TlsSchema),
    }),
    {},
  ),
  auth: v.optional(
    v.strictObject({
      /** Bearer tokens accepted from agents; several at once so they can be rotated. */
      tokens: v.optional(
        v.array(
          v.pipe(
            v.string('must be a string'),
            v.minLength(MIN_TOKEN_LENGTH, `must be at least ${MIN_TOKEN_LENGTH} characters`),
            v.regex(/^\S+$/, 'must not contain white space'),
          ),
          'must be a list of tokens',
        ),
        [],
      ),
    }),
    {},
  ),
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

export const DriverGrpcConfigSchema = v.pipe(
  v.strictObject(driverSectionEntries),
  v.check(
    (c) => c.auth.tokens.length > 0 || c.grpc.tls?.clientCaFile !== undefined,
    'agents must authenticate: set auth.tokens, or grpc.tls.clientCaFile for client certificates',
  ),
);

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
 * driver's own sections above, as one strict object. Whether agents can authenticate is checked by
 * `endpointConfig()`, once tokens from elsewhere have joined the file's.
 */
export const driverFileSchema = driverConfigSchemaWith(driverSectionEntries);

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

/** The endpoint settings of a file, with bearer tokens from elsewhere (a secret, a generated local token) accepted too. */
export function endpointConfig(file: DriverFile, extraTokens: readonly string[] = []): DriverGrpcConfig {
  const { grpc, auth, sessions, assignment, operations } = file;
  return parseDriverGrpcConfig({ grpc, sessions, assignment, operations, auth: { tokens: [...new Set([...auth.tokens, ...extraTokens])] } });
}

/** Tokens of the SST link `VendorAgentTokens` (separated by commas or white space); none when it is not linked. */
export function linkedAgentTokens(env: NodeJS.ProcessEnv): string[] {
  const value = linkedField(env, SST_LINKS.agentTokens, 'value');
  return value === undefined ? [] : value.split(/[\s,]+/).filter((t) => t !== '');
}
