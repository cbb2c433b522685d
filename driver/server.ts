/**
 * The driver's gRPC endpoint: the agent service, the standard health service, bearer-token and
 * TLS authentication, message size limits and keepalive enforcement, on one port (9091 by default).
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import {
  Server,
  ServerInterceptingCall,
  type ServerDuplexStream,
  type ServerInterceptor,
  type ServiceDefinition,
  type StatusObject,
} from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { systemClock, type Clock } from '../shared/clock.ts';
import { VendorError, isVendorError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import type { OperationEvents } from '../shared/operations/events.ts';
import { agentProtocol } from '../shared/protocol/loader.ts';
import { AGENT_SERVICE_NAME, type DriverMessage } from '../shared/protocol/messages.ts';
import { ERROR_CODE_TRAILER } from '../shared/protocol/wire.ts';
import type { TableRef } from '../shared/table/core/client.ts';
import type { AgentIdentity } from '../shared/agents/identity.ts';
import { AgentSession, Undecodable, type IncomingAgentMessage } from './agent-session.ts';
import { authenticated, type AgentAuthenticator, type Authenticated } from './auth.ts';
import { needsRecheck, watchCredentials } from './credential-watch.ts';
import { Waker } from '../shared/waker.ts';
import { createAgentAuthenticator } from './credentials.ts';
import { checkTransportPolicy } from './transport-policy.ts';
import type { DriverGrpcConfig } from './config.ts';
import { widenFlowWindow } from './flow-window.ts';
import { statusOfError } from './grpc-status.ts';
import type { AgentMessageHandlers, DriverModule, DriverModuleFactory, DriverServices, HandledKind } from './handlers.ts';
import { enforcePingPolicy } from './ping-policy.ts';
import { TableSessionStore } from './session-store.ts';
import { createDriverMetrics, type DriverMetrics } from './metrics/metrics.ts';
import { instrumentTable } from './metrics/table.ts';
import { serverCredentials } from './tls.ts';
import type { WakeName, WakeTopic } from '../shared/wake/message.ts';

export interface DriverOptions {
  config: DriverGrpcConfig;
  /** Sessions, accounts and everything the modules keep. */
  table: TableRef;
  log: Logger;
  clock?: Clock;
  /** Names this process in sessions and Welcome; defaults to host name, pid and a random suffix. */
  replicaId?: string;
  /** The modules to run (driver/modules.ts lists the production set). */
  modules: readonly DriverModuleFactory[];
  /** Operation news shared with the API in this process (`npm start`): new operations are handed out at once. */
  operationEvents?: OperationEvents;
  /** Who a call's credential speaks for; by default client certificates, tokens of the table and of `config.auth`. */
  authenticate?: AgentAuthenticator;
  /** Production mode (`VENDOR_ENV=production`): fleet-wide tokens and plaintext on a network address are refused. */
  production?: boolean;
  /** Where the driver counts what it does (docs/metrics.md); a registry of its own by default. */
  metrics?: DriverMetrics;
  /** Where this replica takes wakes (`host:port`), recorded on its sessions' items (docs/protocol.md#6b-wakes). */
  wakeAddress?: string;
}

export interface Driver {
  readonly port: number;
  readonly replicaId: string;
  /** Sessions on this replica that have been welcomed and not yet ended. */
  sessions(): AgentSession[];
  /** Tells the modules the API wrote work of `topic` (a verified wake, perhaps naming an operation or an account): they read the table now. */
  wake(topic: WakeTopic, named?: WakeName): void;
  readonly health: HealthImplementation;
  readonly metrics: DriverMetrics;
  /**
   * Stops accepting agents, ends every stream with UNAVAILABLE, waits up to `graceMs` for them to go,
   * then stops the modules.
   */
  close(graceMs?: number): Promise<void>;
}

/** Every module's handlers in one registry; two modules handling the same kind is a programming error. */
function mergeHandlers(modules: readonly DriverModule[]): AgentMessageHandlers {
  const merged: Record<string, unknown> = {};
  for (const m of modules) {
    for (const [kind, handler] of Object.entries(m.handlers ?? {})) {
      if (merged[kind] !== undefined) throw new Error(`two driver modules handle ${kind as HandledKind}`);
      merged[kind] = handler;
    }
  }
  return merged as AgentMessageHandlers;
}

const CONNECT_PATH = `/${AGENT_SERVICE_NAME}/Connect`;

/** The agent service with a deserializer that hands undecodable bytes to the session to refuse by name. */
function agentServiceDefinition(): ServiceDefinition {
  const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
  return {
    Connect: {
      ...connect,
      requestDeserialize: (bytes: Buffer): IncomingAgentMessage => {
        try {
          return { message: connect.requestDeserialize(bytes), bytes: bytes.length };
        } catch (e) {
          return new Undecodable(e instanceof Error ? e.message : 'cannot decode');
        }
      },
    },
  };
}

/**
 * Logs error statuses that grpc-js itself sends on the agent stream (an oversize message, for
 * one), which never reach the handler. Statuses the driver chose carry the error-code trailer and
 * are logged where they are raised, with the session's details.
 */
function transportStatusLogger(log: Logger): ServerInterceptor {
  return (method, call) => {
    if (method.path !== CONNECT_PATH) return new ServerInterceptingCall(call);
    const send = call.sendStatus.bind(call);
    call.sendStatus = (s: Partial<StatusObject> & { code: number; details: string }) => {
      if (s.code !== 0 && (s.metadata?.get(ERROR_CODE_TRAILER).length ?? 0) === 0) {
        log.warn({ peer: call.getPeer(), grpcCode: s.code, details: s.details }, `agent stream refused by the transport: ${s.details}`);
      }
      send(s);
    };
    // The status hook sits on the call grpc-js made; this layer only passes everything through.
    return new ServerInterceptingCall(call);
  };
}

export async function startDriver(options: DriverOptions): Promise<Driver> {
  const { config, table, log } = options;
  const clock = options.clock ?? systemClock;
  const replicaId = options.replicaId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const { grpc, auth, sessions: sessionSettings } = config;
  checkTransportPolicy(config, options.production ?? false, log);
  const authenticate = options.authenticate ?? createAgentAuthenticator({ table, clock, config });
  const live = new Set<AgentSession>();
  /** Every stream let in and not yet ended, welcomed or not: what the caps count and the credential watch checks. */
  const accepted = new Map<AgentSession, Authenticated>();
  const perIdentity = new Map<string, number>();
  const credentialsWaker = new Waker();
  /** Session ends still being written, awaited on close so none is cut off. */
  const closing = new Set<Promise<void>>();
  const store = new TableSessionStore(table, log, config.assignment.handoverGraceMs, { clock });
  const metrics = options.metrics ?? createDriverMetrics();
  const stopTableMetrics = instrumentTable(table, metrics);
  metrics.follow({ sessions: () => live });

  const modules: DriverModule[] = [];
  const services: DriverServices = {
    table,
    clock,
    log,
    replicaId,
    config,
    operationEvents: options.operationEvents,
    metrics,
    sessions: () => [...live],
    holdingChanged: (session, account, holding) => {
      for (const m of modules) m.onHoldingChange?.(session, account, holding);
    },
  };
  for (const factory of options.modules) modules.push(factory(services));
  const handlers = mergeHandlers(modules);
  const stopModules = new AbortController();
  const stopAll = async () => {
    stopTableMetrics();
    stopModules.abort();
    for (const m of [...modules].reverse()) await m.stop?.();
  };
  try {
    for (const m of modules) await m.start?.(stopModules.signal);
  } catch (e) {
    await stopAll();
    throw e;
  }

  const server = new Server({
    'grpc.max_receive_message_length': grpc.maxMessageBytes,
    'grpc.max_send_message_length': grpc.maxMessageBytes,
    'grpc.keepalive_time_ms': grpc.keepalive.timeMs,
    'grpc.keepalive_timeout_ms': grpc.keepalive.timeoutMs,
    interceptors: [transportStatusLogger(log)],
  });

  const health = new HealthImplementation({ '': 'SERVING', [AGENT_SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);

  const notify = (what: string, hook: (m: DriverModule) => void) => {
    for (const m of modules) {
      try {
        hook(m);
      } catch (e) {
        log.error({ module: m.name, err: e }, `driver module failed on ${what}`);
      }
    }
  };

  server.addService(agentServiceDefinition(), {
    Connect: async (call: ServerDuplexStream<IncomingAgentMessage, DriverMessage>) => {
      let who: Authenticated | undefined;
      try {
        // Until a listener is attached the stream buffers what the agent sends, so nothing is lost meanwhile.
        who = authenticated(await authenticate(call));
        const name = who.identity.name;
        if (accepted.size >= grpc.maxStreams) {
          throw new VendorError('limit_exceeded', `this driver replica holds the most agent streams it may (grpc.maxStreams ${grpc.maxStreams})`);
        }
        if ((perIdentity.get(name) ?? 0) >= auth.maxStreamsPerIdentity) {
          throw new VendorError('limit_exceeded', `agent identity ${name} holds the most streams it may on this replica (auth.maxStreamsPerIdentity ${auth.maxStreamsPerIdentity})`);
        }
      } catch (e) {
        // Refused before anything is recorded: no session, no store write.
        log.warn({ peer: call.getPeer(), identity: who?.identity.name }, `agent refused: ${(e as Error).message}`);
        metrics.streamsRefused.inc({ code: isVendorError(e) ? e.code : 'internal' });
        call.emit('error', statusOfError(e));
        return;
      }
      // A call the agent gave up while it was being authenticated would hold a place under the caps until its lease ran out.
      if (call.cancelled) return;
      const identity: AgentIdentity = who.identity;
      log.info({ peer: call.getPeer(), identity: identity.name, credential: who.credential.kind, tokenId: who.credential.tokenId }, `agent stream accepted for identity ${identity.name}`);
      perIdentity.set(identity.name, (perIdentity.get(identity.name) ?? 0) + 1);
      metrics.streamsOpened.inc();
      let counted = true;
      const release = () => {
        if (!counted) return;
        counted = false;
        const left = (perIdentity.get(identity.name) ?? 1) - 1;
        if (left > 0) perIdentity.set(identity.name, left);
        else perIdentity.delete(identity.name);
      };
      const session = new AgentSession(call, {
        identity,
        store,
        clock,
        log,
        handlers,
        settings: { replicaId, wakeAddress: options.wakeAddress, ...sessionSettings },
        onOpen: (s) => {
          live.add(s);
          notify('session open', (m) => m.onSessionOpen?.(s));
        },
        onClose: (s, reason) => {
          metrics.streamsClosed.inc({ cause: s.closedCode ?? 'ended' });
          release();
          accepted.delete(s);
          const written = s.closeWritten;
          closing.add(written);
          void written.finally(() => closing.delete(written));
          if (!live.delete(s)) return;
          notify('session close', (m) => m.onSessionClose?.(s, reason));
        },
      });
      if (counted) {
        accepted.set(session, who);
        if (needsRecheck(who.credential)) credentialsWaker.wake();
      }
    },
  });

  const address = grpc.host.includes(':') ? `[${grpc.host}]:${grpc.port}` : `${grpc.host}:${grpc.port}`;
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(address, serverCredentials(grpc.tls), (err, bound) =>
        err ? reject(new VendorError('unavailable', `cannot listen on ${address}: ${err.message}`, { cause: err })) : resolve(bound),
      );
    });
  } catch (e) {
    await stopAll();
    throw e;
  }

  const stopWatch = new AbortController();
  void watchCredentials(
    {
      waker: credentialsWaker,
      table,
      clock,
      log,
      intervalMs: auth.recheckIntervalMs,
      streams: () => [...accepted].map(([session, { identity, credential }]) => ({
        identity,
        credential,
        sessionId: session.id,
        agentId: session.agentId,
        end: (e: VendorError) => session.end(e),
      })),
    },
    stopWatch.signal,
  );

  const stopPingPolicy = enforcePingPolicy(
    grpc.keepalive,
    (session) => session.socket?.localPort === port,
    clock,
    (session, strikes) =>
      log.warn({ peer: `${session.socket?.remoteAddress}:${session.socket?.remotePort}`, strikes }, 'agent pinged too often: closing its connection (too_many_pings)'),
  );

  const stopFlowWindow = widenFlowWindow(grpc.maxMessageBytes, (session) => session.socket?.localPort === port);

  log.info({ port, replicaId, tls: grpc.tls !== undefined, mtls: grpc.tls?.clientCaFile !== undefined }, 'driver listening');

  let closed: Promise<void> | undefined;
  return {
    port,
    replicaId,
    health,
    metrics,
    sessions: () => [...live],
    wake: (topic, named) => notify('wake', (m) => m.onWake?.(topic, named)),
    close: (graceMs = 5000) =>
      (closed ??= (async () => {
        health.setStatus('', 'NOT_SERVING');
        health.setStatus(AGENT_SERVICE_NAME, 'NOT_SERVING');
        stopWatch.abort();
        stopPingPolicy();
        stopFlowWindow();
        for (const s of [...live]) s.end(new VendorError('unavailable', 'driver shutting down'));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            server.forceShutdown();
            resolve();
          }, graceMs);
          server.tryShutdown(() => {
            clearTimeout(timer);
            resolve();
          });
        });
        // The session ends are written before the modules stop, so other replicas see the agents go.
        await Promise.race([Promise.all(closing), new Promise((r) => setTimeout(r, Math.max(graceMs, 2_000)).unref())]);
        await stopAll();
      })()),
  };
}
