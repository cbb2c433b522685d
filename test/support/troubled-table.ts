/**
 * A client of the same table whose reads of some accounts are in trouble, as when their partitions are
 * slow or throttled: from the moment a name is in `state.trouble`, every GetItem whose key names it is
 * held until `release()`, or refused as throttled while `state.throttled` is set; every other request
 * goes through. A client of its own, not a view of the given one: a driver adds its own middleware to
 * the client it is given.
 */
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';

export interface TroubledTable {
  table: TableRef;
  state: { trouble: Set<string>; throttled: boolean; held: number; refused: number };
  release(): void;
  close(): void;
}

export async function troubledTable(t: TableRef): Promise<TroubledTable> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const state = { trouble: new Set<string>(), throttled: false, held: 0, refused: 0 };
  const endpoint = await t.client.config.endpoint?.();
  if (endpoint === undefined) throw new Error('the table client has no endpoint');
  const client = createDocumentClient({ endpoint: `${endpoint.protocol}//${endpoint.hostname}:${endpoint.port ?? 80}`, region: 'local', credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // The table client sends a document command as the low-level one it wraps, with its input as given.
      if (state.trouble.size > 0 && context.commandName === 'GetItemCommand') {
        const key = JSON.stringify((args.input as { Key?: unknown }).Key);
        if ([...state.trouble].some((name) => key.includes(name))) {
          if (state.throttled) {
            state.refused++;
            throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'client' });
          }
          state.held++;
          await released;
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'troubledPartitions' },
  );
  return { table: { client, tableName: t.tableName }, state, release, close: () => client.destroy() };
}
