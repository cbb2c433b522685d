/**
 * The replica's wake endpoint (docs/protocol.md#6b-wakes): a UDP socket where the API says "read the
 * work feed, or the operation queue, now". A datagram is counted against the rate first, then its
 * signature, age and nonce are checked; only a wake that passes all of them reaches `onWake`, and
 * every outcome is counted (`vendor_driver_wakes_total`). The API's verdicts on reservations
 * (shared/wake/reservation-verdict.ts) come to the same socket, pass the same checks and reach
 * `onVerdict`. Nothing is answered, so the socket can neither be used to reflect traffic nor tell a
 * sender anything.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/log.ts';
import { pathTrace, traceNow } from '../../shared/operations/path-trace.ts';
import { verifyWake, type WakeName, type WakeTopic } from '../../shared/wake/message.ts';
import { isReservationVerdict, verifyReservationVerdict, type ReservationVerdict } from '../../shared/wake/reservation-verdict.ts';
import type { WakeConfig } from './config.ts';
import { DatagramRate, NonceWindow } from './guard.ts';

export type WakeOutcome = 'accepted' | 'malformed' | 'forged' | 'stale' | 'replayed' | 'rate_limited';

export interface WakeEndpointOptions {
  config: Pick<WakeConfig, 'host' | 'port' | 'maxAgeMs' | 'maxPerSecond'>;
  secret: string;
  clock: Clock;
  log: Logger;
  onWake(topic: WakeTopic, named?: WakeName): void;
  /** Hears the API's verdicts on reservations made here (docs/protocol.md#reservations); without it they are ignored as malformed. */
  onVerdict?(verdict: ReservationVerdict): void;
  /** Hears every datagram's outcome (the metrics). */
  counted?(outcome: WakeOutcome): void;
}

export interface WakeEndpoint {
  /** The port it listens on (the configured one, or the one picked for port 0). */
  readonly port: number;
  close(): Promise<void>;
}

export async function startWakeEndpoint(options: WakeEndpointOptions): Promise<WakeEndpoint> {
  const { config, secret, clock, log, onWake } = options;
  const rate = new DatagramRate(config.maxPerSecond, clock.now());
  // Wakes taken within twice the window at the full rate: enough for every wake that can pass.
  const nonces = new NonceWindow(config.maxAgeMs, config.maxPerSecond * Math.ceil((config.maxAgeMs * 2) / 1000));
  const socket: Socket = createSocket({ type: isIPv6(config.host) ? 'udp6' : 'udp4' });
  let refusalsLogged = 0;
  const outcome = (o: WakeOutcome): void => {
    options.counted?.(o);
    // The first few refusals say why; a flood shows in the metrics, not in the log.
    if (o !== 'accepted' && o !== 'rate_limited' && refusalsLogged++ < 5) log.warn({ outcome: o }, 'wake ignored');
  };
  socket.on('message', (datagram, from) => {
    const arrived = pathTrace === undefined ? 0 : traceNow();
    const now = clock.now();
    if (!rate.take(now)) return outcome('rate_limited');
    if (options.onVerdict !== undefined && isReservationVerdict(datagram)) {
      const verdict = verifyReservationVerdict(secret, datagram);
      if (verdict === 'malformed' || verdict === 'forged') return outcome(verdict);
      const refused = nonces.admit(verdict.nonce, verdict.at, now);
      if (refused !== undefined) return outcome(refused);
      // Not a wake: what came of it is counted with its reservation.
      return options.onVerdict(verdict);
    }
    const wake = verifyWake(secret, datagram);
    if (wake === 'malformed' || wake === 'forged') {
      if (refusalsLogged < 5) log.debug({ from: from.address }, `wake from ${from.address} is ${wake}`);
      return outcome(wake);
    }
    const refusal = nonces.admit(wake.nonce, wake.at, now);
    if (refusal !== undefined) return outcome(refusal);
    outcome('accepted');
    if (wake.operation !== undefined) pathTrace?.('replica.wake_received', wake.operation.id, arrived);
    log.debug({ topic: wake.topic, named: wake.operation !== undefined || wake.account !== undefined }, 'wake accepted');
    onWake(wake.topic, wake.operation ?? (wake.account === undefined ? undefined : { account: wake.account }));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(config.port, config.host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  socket.on('error', (err) => log.warn({ err: err.message }, 'wake endpoint error'));
  const port = socket.address().port;
  log.info({ host: config.host, port }, 'wake endpoint listening');
  return {
    port,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
