/**
 * The benchmark's table in a process of its own, as DynamoDB is a service of its own: dynalite on a
 * free loopback port. Prints `{ endpoint, tableName }` once ready; stops on SIGTERM.
 */
import { startEmbeddedTable } from '../shared/table/embedded.ts';

const table = await startEmbeddedTable();
process.stdout.write(`${JSON.stringify({ endpoint: table.endpoint, tableName: table.tableName })}\n`);
process.on('SIGTERM', () => void table.close().then(() => process.exit(0)));
