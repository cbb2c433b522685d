/**
 * `bench:fleet`'s management API in a process of its own, as the API runs apart from the driver when
 * deployed: the app over plain HTTP on loopback, on the table named by the environment
 * (test/support/table-env.ts), with `BENCH_ADMIN_TOKEN` as its local admin token. Prints one JSON line
 * with its port once it listens.
 */
import { createApp } from '../functions/app.ts';
import { createApiAuth } from '../functions/auth/authenticator.ts';
import { startApiServer } from '../functions/node.ts';
import { systemClock } from '../shared/clock.ts';
import { createDocumentClient } from '../shared/table/core/client.ts';

const env = process.env;
const table = {
  tableName: env.VENDOR_TABLE_NAME as string,
  client: createDocumentClient({ endpoint: env.VENDOR_DYNAMODB_ENDPOINT as string, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
};
const app = createApp({ table, clock: systemClock, auth: createApiAuth({ adminToken: env.BENCH_ADMIN_TOKEN as string, accountManagerRoles: [] }, { production: false }) });
const server = await startApiServer(app);
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
