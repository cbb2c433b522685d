/**
 * The embedded table (dynalite) in a process of its own, as DynamoDB is a service of its own: the
 * control plane's figures then do not include the table's CPU. Prints one JSON line with the
 * endpoint and table name once the table is ready; SIGTERM stops it.
 */
import { startEmbeddedTable } from '../shared/table/embedded.ts';

const table = await startEmbeddedTable();
process.stdout.write(`${JSON.stringify({ endpoint: table.endpoint, tableName: table.tableName })}\n`);
const stop = (): void => void table.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
