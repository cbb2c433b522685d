/**
 * A hand-driven agent for driver tests: sends exactly the messages (or bytes) a test gives it and
 * records what comes back, so tests can break the protocol on purpose.
 */
import { Client, Metadata, credentials, type ChannelCredentials, type ChannelOptions, type ClientDuplexStream, type StatusObject } from '@grpc/grpc-js';
import { agentProtocol } from '../shared/protocol/loader.ts';
import { AGENT_SERVICE_NAME, PROTOCOL_VERSION, type AgentMessage, type DriverMessage__Output } from '../shared/protocol/messages.ts';

export interface RawAgentOptions {
  port: number;
  token?: string;
  credentials?: ChannelCredentials;
  channelOptions?: ChannelOptions;
  host?: string;
}

export class RawAgent<Out = AgentMessage> {
  readonly #client: Client;
  readonly #call: ClientDuplexStream<Out, DriverMessage__Output>;
  readonly #received: DriverMessage__Output[] = [];
  #waiters: (() => void)[] = [];
  #ackSent = 0;
  #beat: NodeJS.Timeout | undefined;
  readonly status: Promise<StatusObject>;

  constructor(options: RawAgentOptions, serialize: (m: Out) => Buffer) {
    this.#client = new Client(
      `${options.host ?? '127.0.0.1'}:${options.port}`,
      options.credentials ?? credentials.createInsecure(),
      options.channelOptions ?? {},
    );
    const metadata = new Metadata();
    if (options.token !== undefined) metadata.set('authorization', `Bearer ${options.token}`);
    const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
    this.#call = this.#client.makeBidiStreamRequest(
      `/${AGENT_SERVICE_NAME}/Connect`,
      serialize,
      (b: Buffer) => connect.responseDeserialize(b),
      metadata,
    );
    this.#call.on('data', (m: DriverMessage__Output) => {
      this.#received.push(m);
      for (const w of this.#waiters.splice(0)) w();
    });
    this.#call.on('error', () => undefined);
    this.status = new Promise((resolve) => this.#call.on('status', resolve));
  }

  static messages(options: RawAgentOptions): RawAgent {
    const connect = agentProtocol().vendor.agent.v1.AgentService.service.Connect;
    return new RawAgent<AgentMessage>(options, (m) => connect.requestSerialize(m));
  }

  static bytes(options: RawAgentOptions): RawAgent<Buffer> {
    return new RawAgent<Buffer>(options, (b) => b);
  }

  send(message: Out): void {
    const ack = (message as { ackSeq?: unknown }).ackSeq;
    if (typeof ack === 'number') this.#ackSent = Math.max(this.#ackSent, ack);
    this.#call.write(message);
  }

  /**
   * Sends a heartbeat every `ms` until closed, carrying the highest ack sent so far, so the driver's
   * lease outlasts a slow step of the test. The answers arrive among the other messages.
   */
  keepAlive(this: RawAgent<AgentMessage>, ms: number): void {
    this.#beat ??= setInterval(() => this.send({ ackSeq: this.#ackSent, heartbeat: { id: 0 } }), ms);
    void this.status.then(() => clearInterval(this.#beat));
  }

  /** The next message from the driver (in order); rejects if the stream ends first. */
  async next(): Promise<DriverMessage__Output> {
    for (;;) {
      const m = this.#received.shift();
      if (m !== undefined) return m;
      const ended = await Promise.race([
        new Promise<false>((resolve) => this.#waiters.push(() => resolve(false))),
        this.status.then(() => true),
      ]);
      if (ended && this.#received.length === 0) throw new Error('stream ended');
    }
  }

  /** The messages received and not yet taken, without waiting. */
  take(): DriverMessage__Output[] {
    return this.#received.splice(0);
  }

  close(): void {
    clearInterval(this.#beat);
    this.#call.cancel();
    this.#client.close();
  }
}

export const helloMessage = (agentId: string, extra: Partial<NonNullable<AgentMessage['hello']>> = {}): AgentMessage => ({
  hello: { protocolVersion: PROTOCOL_VERSION, agentId, zone: 'vendor-agent_infra', agentVersion: '0.1.0', ...extra },
});
