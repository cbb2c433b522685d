/**
 * News about operations inside one process. When the API and the driver run in the same process
 * (`npm start`), the API asks the local dispatcher for an agent before it stores a new operation, so
 * the operation is stored already handed out and goes to the agent right after (no claim write, no
 * queue read); an operation stored without one wakes the dispatcher at once; and a waiting GET learns
 * that an operation finished without polling the table. Across processes nothing travels here: the
 * API asks a replica for a reservation over the network (functions/wake/reserver.ts), which that
 * replica's dispatcher makes through its own `OperationEvents`; the dispatcher polls the queue (or is
 * woken), and a replica answers the API's result asks from the operations that finished through it
 * (driver/wake/result-news.ts).
 */
import { EventEmitter } from 'node:events';
import type { Dispatch, OperationRecord } from './model.ts';
import type { OperationRequest } from './request.ts';

export interface QueuedOperation {
  record: OperationRecord;
  /** The request as stored, so the local dispatcher need not read it back. */
  request: OperationRequest;
}

/** An agent set aside by the local dispatcher for one operation about to be stored. */
export interface OperationReservation {
  /** What the operation is stored with: it is created RUNNING, attempt 1, handed to this agent. */
  readonly dispatch: Dispatch;
  /** The operation was stored with `dispatch`: send it to the agent now. */
  handOut(op: QueuedOperation): void;
  /** It was not (the key already stood for an operation, or the write failed): the agent is free again. */
  release(): void;
}

/** The driver's side of the hand-over, when a dispatcher runs in this process. */
export interface LocalDispatcher {
  /** An agent with a stream to this process that holds `account`, set aside for operation `id`; undefined when there is none. */
  reserve(id: string, account: string, now: number): OperationReservation | undefined;
}

/** Operations handed out here that are remembered until their result comes, at most. */
export const REMEMBERED_HANDED_OUT = 10_000;

export class OperationEvents {
  readonly #emitter = new EventEmitter();
  #dispatcher: LocalDispatcher | undefined;
  /** Operations stored handed out to an agent of this process, as stored, until they finish here. */
  readonly #handedOut = new Map<string, OperationRecord>();

  constructor() {
    // Every waiting GET listens: there is no sensible cap.
    this.#emitter.setMaxListeners(0);
  }

  /** The dispatcher of this process takes part in creating operations until the returned function is called. */
  attach(dispatcher: LocalDispatcher): () => void {
    this.#dispatcher = dispatcher;
    return () => {
      if (this.#dispatcher === dispatcher) this.#dispatcher = undefined;
    };
  }

  /** Whether a dispatcher runs in this process (then it alone is asked for reservations). */
  get dispatching(): boolean {
    return this.#dispatcher !== undefined;
  }

  reserve(id: string, account: string, now: number): OperationReservation | undefined {
    return this.#dispatcher?.reserve(id, account, now);
  }

  queued(op: QueuedOperation): void {
    this.#emitter.emit('queued', op);
  }

  /**
   * Operation `record` was stored handed out to an agent of this process: its result will most likely
   * be recorded here, so a waiting GET may wait for that news instead of reading the table first.
   */
  handedOut(record: OperationRecord): void {
    if (this.#handedOut.size >= REMEMBERED_HANDED_OUT) this.#handedOut.delete(this.#handedOut.keys().next().value as string);
    this.#handedOut.set(record.id, record);
  }

  /** The operation as stored, when it was handed out here and has not finished here since. */
  handedOutHere(id: string): OperationRecord | undefined {
    return this.#handedOut.get(id);
  }

  /** Found finished in the table (its result was recorded elsewhere): no news will come here. */
  forget(id: string): void {
    this.#handedOut.delete(id);
  }

  finished(record: OperationRecord): void {
    this.#handedOut.delete(record.id);
    this.#emitter.emit(`finished:${record.id}`, record);
    this.#emitter.emit('finished', record);
  }

  /** Hears every operation that finishes here (a replica's result news for asks from other processes). */
  onFinished(listener: (record: OperationRecord) => void): () => void {
    this.#emitter.on('finished', listener);
    return () => this.#emitter.off('finished', listener);
  }

  onQueued(listener: (op: QueuedOperation) => void): () => void {
    this.#emitter.on('queued', listener);
    return () => this.#emitter.off('queued', listener);
  }

  /** Resolves with the finished operation, or undefined when `signal` aborts first. */
  waitFinished(id: string, signal: AbortSignal): Promise<OperationRecord | undefined> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(undefined);
      const event = `finished:${id}`;
      const onFinished = (record: OperationRecord) => {
        signal.removeEventListener('abort', onAbort);
        resolve(record);
      };
      const onAbort = () => {
        this.#emitter.off(event, onFinished);
        resolve(undefined);
      };
      this.#emitter.once(event, onFinished);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
