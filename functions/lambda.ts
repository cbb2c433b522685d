import { handle } from 'hono/aws-lambda';
import { createLogger } from '../shared/log.ts';
import { tableFromEnv } from '../shared/table/client.ts';
import { createApp } from './app.ts';

/**
 * The AWS Lambda entry point: the same app as the Node server, with the deployed table (name from
 * `VENDOR_TABLE_NAME` or the SST link). Built once per container, reused across invocations.
 */
export const handler = handle(
  createApp({ table: tableFromEnv(), logger: createLogger({ base: { component: 'api' } }) }),
);
