/**
 * Every metric the driver exports (docs/metrics.md), defined once: the endpoint, its modules and the
 * table layer each get this object and count what concerns them. Names follow Prometheus conventions
 * (`vendor_driver_` prefix, `_total` counters, seconds and bytes). No series carries an account name:
 * a fleet may hold thousands of accounts, and per-account detail is the API's and the logs' job.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { VERSION } from '../../shared/version.ts';

/** Latency buckets (seconds) of the driver's own work: from a table round trip up to an operation's deadline. */
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const TABLE_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const OPERATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** A welcomed stream, as the session gauges see it. */
export interface CountedSession {
  readonly zone: string;
  readonly identity: { readonly name: string };
}

export interface DriverMetrics {
  readonly registry: Registry;
  /** Agent streams accepted (authenticated and under the caps). */
  readonly streamsOpened: Counter;
  /** Agent streams refused before a session began, by error code (unauthenticated, limit_exceeded, ...). */
  readonly streamsRefused: Counter<'code'>;
  /** Accepted streams that ended, by cause (agent_closed, cancelled, stream_failed, or the error code the driver ended it with). */
  readonly streamsClosed: Counter<'cause'>;
  /** Assignment results from agents, by whether the agent could use the account and what the replica made of it. */
  readonly assignmentResults: Counter<'ok' | 'outcome'>;
  /** From a work-feed entry's write to this replica reading it. */
  readonly assignmentPickupLag: Histogram;
  /** Operations this replica handed to an agent (each attempt). */
  readonly operationsHandedOut: Counter;
  /** Operations this replica finished, by final state (SUCCEEDED, FAILED, TIMED_OUT). */
  readonly operationsFinished: Counter<'state'>;
  /** From an operation's creation to its end, by final state. */
  readonly operationDuration: Histogram<'state'>;
  /** Open operations by state (QUEUED, RUNNING) at this replica's last read of the queue. */
  readonly operationsOpen: Gauge<'state'>;
  /** Object changes received from caching agents. */
  readonly resourceEventsReceived: Counter;
  /** Objects written to (or deleted from) the table after coalescing. */
  readonly resourceObjectsWritten: Counter;
  /** From taking a change from an agent to its write in the table. */
  readonly resourceWriteLag: Histogram;
  /** Cache messages that had to wait for room on their stream, by the bound (docs/cache.md#the-drivers-side). */
  readonly cacheStreamPauses: Counter;
  readonly resourceWritesDropped: Counter;
  /** Each try of a table request, by DynamoDB operation. */
  readonly tableRequestDuration: Histogram<'operation'>;
  /** Table tries that failed, by operation and type (throttled, unavailable, refused). */
  readonly tableErrors: Counter<'operation' | 'type'>;
  /** Datagrams at the wake endpoint, by outcome: accepted, or why ignored (docs/protocol.md#6b-wakes). */
  readonly wakes: Counter<'outcome'>;
  /** Operations wakes that named an operation, by what came of the name (docs/protocol.md#6b-wakes). */
  readonly namedWakes: Counter<'outcome'>;
  /** The API's result asks at this replica, by outcome: answered, or why refused (docs/protocol.md#result-asks). */
  readonly resultAsks: Counter<'outcome'>;
  /** The API's reservation asks and their verdicts at this replica, by outcome (docs/protocol.md#reservations). */
  readonly reservations: Counter<'outcome'>;
  /** Sources of values read at scrape time: the sessions and the assignment queue of this replica. */
  follow(sources: { sessions?: () => Iterable<CountedSession>; assignmentQueue?: () => number }): void;
}

export function createDriverMetrics(registry = new Registry()): DriverMetrics {
  const registers = [registry];
  collectDefaultMetrics({ register: registry });
  new Gauge({ name: 'vendor_driver_build_info', help: 'Always 1; the version of the running driver', labelNames: ['version'], registers }).set({ version: VERSION }, 1);
  const sources: { sessions?: () => Iterable<CountedSession>; assignmentQueue?: () => number } = {};
  new Gauge({
    name: 'vendor_driver_sessions',
    help: 'Welcomed agent sessions on this replica, by zone and identity',
    labelNames: ['zone', 'identity'],
    registers,
    collect() {
      this.reset();
      for (const s of sources.sessions?.() ?? []) this.inc({ zone: s.zone, identity: s.identity.name });
    },
  });
  new Gauge({
    name: 'vendor_driver_assignment_queue_depth',
    help: 'Accounts waiting to be settled by this replica',
    registers,
    collect() {
      this.set(sources.assignmentQueue?.() ?? 0);
    },
  });
  return {
    registry,
    follow: (more) => Object.assign(sources, more),
    streamsOpened: new Counter({ name: 'vendor_driver_streams_opened_total', help: 'Agent streams accepted', registers }),
    streamsRefused: new Counter({ name: 'vendor_driver_streams_refused_total', help: 'Agent streams refused before a session began', labelNames: ['code'], registers }),
    streamsClosed: new Counter({ name: 'vendor_driver_streams_closed_total', help: 'Accepted agent streams that ended', labelNames: ['cause'], registers }),
    assignmentResults: new Counter({ name: 'vendor_driver_assignment_results_total', help: 'Assignment results from agents', labelNames: ['ok', 'outcome'], registers }),
    assignmentPickupLag: new Histogram({ name: 'vendor_driver_assignment_pickup_lag_seconds', help: 'From a work-feed entry to this replica reading it', buckets: LAG_BUCKETS, registers }),
    operationsHandedOut: new Counter({ name: 'vendor_driver_operations_handed_out_total', help: 'Operation attempts handed to agents', registers }),
    operationsFinished: new Counter({ name: 'vendor_driver_operations_finished_total', help: 'Operations finished by this replica', labelNames: ['state'], registers }),
    operationDuration: new Histogram({ name: 'vendor_driver_operation_duration_seconds', help: 'From creation to end of an operation', labelNames: ['state'], buckets: OPERATION_BUCKETS, registers }),
    operationsOpen: new Gauge({ name: 'vendor_driver_operations_open', help: 'Open operations at the last read of the queue', labelNames: ['state'], registers }),
    resourceEventsReceived: new Counter({ name: 'vendor_driver_resource_events_received_total', help: 'Object changes received from caching agents', registers }),
    resourceObjectsWritten: new Counter({ name: 'vendor_driver_resource_objects_written_total', help: 'Objects written to or deleted from the table', registers }),
    resourceWriteLag: new Histogram({ name: 'vendor_driver_resource_write_lag_seconds', help: 'From taking a change to writing it', buckets: LAG_BUCKETS, registers }),
    cacheStreamPauses: new Counter({
      name: 'vendor_driver_cache_stream_pauses_total',
      help: 'Times an agent stream stopped being read until its cache messages in the driver made room, by the bound met',
      labelNames: ['bound'],
      registers,
    }),
    resourceWritesDropped: new Counter({ name: 'vendor_driver_resource_writes_dropped_total', help: 'Resource cache writes the table refused for good, dropped', labelNames: ['write'], registers }),
    tableRequestDuration: new Histogram({ name: 'vendor_driver_table_request_duration_seconds', help: 'Each try of a table request', labelNames: ['operation'], buckets: TABLE_BUCKETS, registers }),
    tableErrors: new Counter({ name: 'vendor_driver_table_errors_total', help: 'Table tries that failed', labelNames: ['operation', 'type'], registers }),
    wakes: new Counter({ name: 'vendor_driver_wakes_total', help: 'Datagrams at the wake endpoint, by outcome', labelNames: ['outcome'], registers }),
    namedWakes: new Counter({ name: 'vendor_driver_named_wakes_total', help: 'Operations wakes naming an operation, by what came of the name', labelNames: ['outcome'], registers }),
    resultAsks: new Counter({ name: 'vendor_driver_result_asks_total', help: 'Result asks at the wake port, by outcome', labelNames: ['outcome'], registers }),
    reservations: new Counter({ name: 'vendor_driver_reservations_total', help: 'Reservation asks at the wake port and what came of the reservations, by outcome', labelNames: ['outcome'], registers }),
  };
}
