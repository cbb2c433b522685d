/**
 * The API's side of result asks (docs/protocol.md#6b-wakes). A Lambda function cannot be called back,
 * so a request waiting for an operation asks the replicas that may record its result (those of the
 * account's live agents, found as wakes find them) to answer once it has finished through them: one
 * signed HTTP GET each, held by the replica up to its `resultHoldMs` and asked again while the wait
 * lasts. The answer is only "finished" or "not yet": the request then reads the operation from the
 * table. When no replica can be asked, or every one refuses, fails or goes away, the ask is `lost`
 * and the request reads the table on its own schedule.
 */
import { Agent, request } from 'node:http';
import type { Clock } from '../../shared/clock.ts';
import { parseWakeAddress } from '../../shared/wake/address.ts';
import { encodeResultAsk, RESULT_ASK_HEADER, RESULT_ASK_PATH, RESULT_FINISHED, RESULT_NOT_YET } from '../../shared/wake/result-ask.ts';
import type { WakeTarget } from './target.ts';

/** The longest one ask is held for; the replica may hold it less (its `wake.resultHoldMs`). */
export const RESULT_ASK_HOLD_MS = 20_000;
/** How long past its hold an answer may take before the replica is taken as gone. */
export const RESULT_ASK_GRACE_MS = 2_000;

export interface ResultAskerOptions {
  /** Where the replicas of some agents listen (WakeSender.addresses). */
  replicas: { addresses(targets: readonly WakeTarget[]): Promise<string[]> };
  secret: string;
  clock: Clock;
}

export type ResultNewsOutcome = 'finished' | 'lost';

/** `refused`: the replica answered something else; `broken`: no answer (the connection failed or was cut). */
type AskAnswer = 'finished' | 'not_yet' | 'refused' | 'broken';

export class ResultAsker {
  readonly #options: ResultAskerOptions;
  // Connections are kept between asks: a warm Lambda function skips the TCP handshake.
  readonly #agent = new Agent({ keepAlive: true, maxFreeSockets: 16 });

  constructor(options: ResultAskerOptions) {
    this.#options = options;
  }

  /** Where the replicas that may record the results of `targets`' operations take asks; none when that cannot be found out. */
  replicasOf(targets: readonly WakeTarget[]): Promise<string[]> {
    return this.#options.replicas.addresses(targets).catch(() => []);
  }

  /**
   * Resolves `finished` when a replica at one of `addresses` says operation `id` finished through it, `lost`
   * when none can tell (all refused, failed or gone) or `signal` aborts. Never rejects.
   */
  async listen(id: string, addresses: readonly string[], waitMs: number, signal: AbortSignal): Promise<ResultNewsOutcome> {
    if (addresses.length === 0 || signal.aborted) return 'lost';
    const deadline = this.#options.clock.now() + waitMs;
    const one = new AbortController();
    const onAbort = () => one.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const answers = addresses.map((a) => this.#askUntil(a, id, deadline, one.signal));
      // The first `finished` wins; `lost` only once every replica has failed or the wait is over.
      return await new Promise<ResultNewsOutcome>((resolve) => {
        let open = answers.length;
        for (const answer of answers) {
          void answer.then((outcome) => {
            if (outcome === 'finished') resolve('finished');
            else if (--open === 0) resolve('lost');
          });
        }
      });
    } finally {
      one.abort();
      signal.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    this.#agent.destroy();
  }

  async #askUntil(address: string, id: string, deadline: number, signal: AbortSignal): Promise<ResultNewsOutcome> {
    // A kept connection the replica closed while idle fails on its first use: one more try on a new
    // one tells that apart from a replica that is gone (refused at once).
    let retries = 1;
    for (;;) {
      const left = deadline - this.#options.clock.now();
      if (left <= 0 || signal.aborted) return 'lost';
      const answer = await this.#ask(address, id, Math.min(left, RESULT_ASK_HOLD_MS), signal);
      if (answer === 'finished') return 'finished';
      if (answer === 'refused' || (answer === 'broken' && retries-- <= 0)) return 'lost';
    }
  }

  #ask(address: string, id: string, holdMs: number, signal: AbortSignal): Promise<AskAnswer> {
    const parsed = parseWakeAddress(address);
    if (parsed === undefined) return Promise.resolve('refused');
    const header = encodeResultAsk(this.#options.secret, id, holdMs, this.#options.clock.now());
    return new Promise<AskAnswer>((resolve) => {
      const req = request(
        { host: parsed.host, port: parsed.port, path: RESULT_ASK_PATH, method: 'GET', headers: { [RESULT_ASK_HEADER]: header }, agent: this.#agent, signal, timeout: holdMs + RESULT_ASK_GRACE_MS },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode === RESULT_FINISHED ? 'finished' : res.statusCode === RESULT_NOT_YET ? 'not_yet' : 'refused'));
          res.once('error', () => resolve('broken'));
        },
      );
      req.once('timeout', () => req.destroy());
      req.once('error', () => resolve('broken'));
      req.end();
    });
  }
}
