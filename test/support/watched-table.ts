/**
 * The test tables through a document client of their own, whose every command `watch` sees before it
 * is sent: a suite counts what one component writes or reads. A client of its own, not a view of a
 * shared one, since a driver given it adds its own middleware to it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient, type TableRef } from '../../shared/table/core/client.ts';

/** A command's name (`UpdateCommand`, `QueryCommand`…) and input, as `watch` sees them. */
export type WatchedCommand = (commandName: string, input: Record<string, unknown>) => void;

export function watchedTable(tableName: string, endpoint: string, watch: WatchedCommand): TableRef {
  const client: DynamoDBDocumentClient = createDocumentClient({ endpoint, region: 'local', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      watch(context.commandName ?? '', args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name: 'watchCommands' },
  );
  return { client, tableName };
}
