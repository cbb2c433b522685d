import * as v from 'valibot';

/** The wake endpoint's default UDP port (docs/protocol.md#6b-wakes). */
export const DEFAULT_WAKE_PORT = 9092;

const int = (min: number, max: number) =>
  v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(min, `must be at least ${min}`), v.maxValue(max, `must be at most ${max}`));
const hostSchema = v.pipe(v.string('must be a host name or address'), v.nonEmpty('must be a host name or address'));

/**
 * `wake` of `vendor-driver.yml`: the UDP endpoint where the API wakes this replica when it writes work
 * for it (docs/protocol.md#6b-wakes). On by default, but only with a wake secret in the environment
 * (`VENDOR_WAKE_SECRET` or the SST link): without one, or with `enabled: false`, the replica records
 * no address, the API sends it nothing and it finds work by polling alone.
 */
export const wakeSectionSchema = v.strictObject({
  enabled: v.optional(v.boolean('must be true or false'), true),
  host: v.optional(hostSchema, '0.0.0.0'),
  port: v.optional(int(0, 65_535), DEFAULT_WAKE_PORT),
  /**
   * The address recorded for the API to send to; by default `host`, or, when that is a wildcard, the
   * first IPv4 address of the machine that is not loopback (the task's address on ECS).
   */
  advertiseHost: v.optional(hostSchema),
  /** A wake made longer ago than this (or this far in the future) is refused; nonces are remembered twice as long. */
  maxAgeMs: v.optional(int(1_000, 600_000), 30_000),
  /** Datagrams taken per second, forged or not; more are dropped before they are checked. */
  maxPerSecond: v.optional(int(1, 100_000), 200),
  /**
   * Answer the API's result asks (TCP, the same port number as the wakes): an API waiting for an
   * operation hears at once that it finished through this replica instead of reading the table again.
   */
  results: v.optional(v.boolean('must be true or false'), true),
  /** The longest an ask is held before it is answered "not yet" (the API asks again). */
  resultHoldMs: v.optional(int(100, 60_000), 20_000),
  /** Asks taken per second, forged or not (apart from the datagrams); more are answered 429 unchecked. */
  maxResultAsksPerSecond: v.optional(int(1, 100_000), 1_000),
  /** Asks held at once; more are answered 503 at once (the API then reads the table). */
  maxResultWaiters: v.optional(int(1, 100_000), 1_000),
});

export type WakeConfig = v.InferOutput<typeof wakeSectionSchema>;
