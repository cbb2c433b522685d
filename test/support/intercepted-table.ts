/**
 * The same table through a client whose every command passes `around` first: tests count, record,
 * hold back or race the requests a component sends, while everything else about the client (its
 * middleware, its config) stays the table's own.
 */
import type { TableRef } from '../../shared/table/core/client.ts';

/** A command as the document client takes it: its class names the operation. */
export interface SentCommand {
  input: Record<string, unknown> & { Key?: Record<string, unknown>; Item?: Record<string, unknown> };
}

export type SendThrough = (command: SentCommand) => Promise<unknown>;

export function interceptedTable(t: TableRef, around: (command: SentCommand, send: SendThrough) => Promise<unknown>): TableRef {
  const send = t.client.send.bind(t.client) as unknown as SendThrough;
  const client = Object.create(t.client) as TableRef['client'];
  client.send = ((command: SentCommand) => around(command, send)) as unknown as TableRef['client']['send'];
  return { ...t, client };
}

/** The DynamoDB operation a command stands for: `UpdateCommand` → `Update`. */
export function operationOf(command: SentCommand): string {
  return command.constructor.name.replace(/Command$/, '');
}

/**
 * The table, through which the next command of `operation` after `arm()` is refused as DynamoDB
 * refuses one on an internal error (once; `armed` says whether it is still to come). `table` makes
 * the refusing view of a table created later (a test world's).
 */
export function refusingOnce(operation: string): { table(t: TableRef): TableRef; arm(): void; readonly armed: boolean } {
  let armed = false;
  return {
    table: (t) =>
      interceptedTable(t, async (command, send) => {
        if (armed && operationOf(command) === operation) {
          armed = false;
          throw Object.assign(new Error('the table failed'), { name: 'InternalServerError', $fault: 'server' });
        }
        return send(command);
      }),
    arm: () => {
      armed = true;
    },
    get armed() {
      return armed;
    },
  };
}
