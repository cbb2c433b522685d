/**
 * The API's side of result asks (docs/protocol.md#6b-wakes). A Lambda function cannot be called back,
 * so a request waiting for an operation asks the replicas that may record its result (those of the
 * account's live agents, found as wakes find them) to answer once it has finished through them: one
 * signed HTTP GET each, held by the replica up to its `resultHoldMs` and asked again while the wait
 * lasts. The answer is "finished", with the finished operation when the replica kept it and its
 * signature binds it to this ask (answered-operation.ts), or "not yet". A "finished" without an
 * operation the API believes has the request read the table. When no replica can be asked, or every
 * one refuses, fails or goes away, the ask is `lost` and the request reads the table on its own schedule.
 */
import type { Agent } from 'node:http';
import { pathTrace } from '../../shared/operations/path-trace.ts';
import { parseWakeAddress } from '../../shared/wake/address.ts';
import { encodeResultAsk, RESULT_ASK_HEADER, RESULT_ASK_PATH, RESULT_FINISHED, RESULT_NOT_YET } from '../../shared/wake/result-ask.ts';
import { MAX_RESULT_ANSWER_BYTES, RESULT_ANSWER_HEADER, type AnsweredOperation } from '../../shared/wake/result-answer.ts';
import { believedAnswer } from './answered-operation.ts';
import { replicaConnections, requestReplica, type ReplicaAskOptions } from './replica-request.ts';
import type { WakeTarget } from './target.ts';

/** The longest one ask is held for; the replica may hold it less (its `wake.resultHoldMs`). */
export const RESULT_ASK_HOLD_MS = 20_000;
/** How long past its hold an answer may take before the replica is taken as gone. */
export const RESULT_ASK_GRACE_MS = 2_000;

export type ResultAskerOptions = ReplicaAskOptions;

/** `finished` with the operation when the answer carried one the API believes; `lost` when no replica can tell. */
export type ResultNewsOutcome = { record: AnsweredOperation } | 'finished' | 'lost';

/** `refused`: the replica answered something else; `broken`: no answer (the connection failed or was cut). */
type AskAnswer = { record: AnsweredOperation } | 'finished' | 'not_yet' | 'refused' | 'broken';

export class ResultAsker {
  readonly #options: ResultAskerOptions;
  readonly #agent: Agent;

  constructor(options: ResultAskerOptions) {
    this.#options = options;
    this.#agent = options.connections ?? replicaConnections();
  }

  /** Where the replicas that may record the results of `targets`' operations take asks; none when that cannot be found out. */
  replicasOf(targets: readonly WakeTarget[]): Promise<string[]> {
    return this.#options.replicas.addresses(targets).catch(() => []);
  }

  /**
   * Resolves with the finished operation when a replica at one of `addresses` says operation `id`
   * finished through it and its answer carries the operation (believed), `finished` when it says so
   * without one the API believes, `lost`
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
            if (outcome !== 'lost') resolve(outcome);
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
      if (answer === 'finished' || typeof answer === 'object') return answer;
      if (answer === 'refused' || (answer === 'broken' && retries-- <= 0)) return 'lost';
    }
  }

  async #ask(address: string, id: string, holdMs: number, signal: AbortSignal): Promise<AskAnswer> {
    const parsed = parseWakeAddress(address);
    if (parsed === undefined) return 'refused';
    const header = encodeResultAsk(this.#options.secret, id, holdMs, this.#options.clock.now());
    const answer = await requestReplica({
      ...parsed,
      path: RESULT_ASK_PATH,
      method: 'GET',
      headers: { [RESULT_ASK_HEADER]: header },
      agent: this.#agent,
      signal,
      timeoutMs: holdMs + RESULT_ASK_GRACE_MS,
      okStatus: RESULT_FINISHED,
      maxBodyBytes: MAX_RESULT_ANSWER_BYTES,
      sent: () => pathTrace?.('api.ask_sent', id),
    });
    if (answer === 'broken') return 'broken';
    if (answer.status !== RESULT_FINISHED) return answer.status === RESULT_NOT_YET ? 'not_yet' : 'refused';
    // An answer over the bound is not read: a plain "finished", and the table is read.
    if (answer.body === 'oversized') return 'finished';
    pathTrace?.('api.answer_received', id);
    const signature = answer.headers[RESULT_ANSWER_HEADER];
    const record = answer.body === undefined || answer.body === '' ? undefined : believedAnswer(this.#options.secret, header, id, typeof signature === 'string' ? signature : undefined, answer.body);
    return record === undefined ? 'finished' : { record };
  }
}
