/**
 * News about operations inside one process. When the API and the driver run in the same process
 * (`npm start`), the API's write of a new operation wakes the local dispatcher at once, and a
 * waiting GET learns that an operation finished without polling the table. Across processes nothing
 * travels here: the dispatcher polls the queue and waiting GETs poll the operation.
 */
import { EventEmitter } from 'node:events';
import type { OperationRecord } from './model.ts';
import type { OperationRequest } from './request.ts';

export interface QueuedOperation {
  record: OperationRecord;
  /** The request as stored, so the local dispatcher need not read it back. */
  request: OperationRequest;
}

export class OperationEvents {
  readonly #emitter = new EventEmitter();

  constructor() {
    // Every waiting GET listens: there is no sensible cap.
    this.#emitter.setMaxListeners(0);
  }

  queued(op: QueuedOperation): void {
    this.#emitter.emit('queued', op);
  }

  finished(record: OperationRecord): void {
    this.#emitter.emit(`finished:${record.id}`, record);
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
