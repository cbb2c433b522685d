import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ManualClock } from '../test/support/manual-clock.ts';
import { useTestTables } from '../test/support/table.ts';
import { parseDriverFile } from './config.ts';
import { startDriverProcess } from './main.ts';
import { interceptedTable } from '../test/support/intercepted-table.ts';

/** A logger keeping every record it is given. */
function recordingLogger(): { log: pino.Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info', base: {} }, sink), records };
}

describe("a driver replica's start with driver-defined accounts", () => {
  const tables = useTestTables();

  it('logs what the sync of its file added, removed and kept, and how long that took on its clock', async () => {
    const table = await tables.fresh();
    const accounts = Array.from({ length: 30 }, (_, i) => ({ name: `start-${i}`, kubeconfigFile: '/k/file' }));
    const file = parseDriverFile(stringify({ grpc: { host: '127.0.0.1', port: 0 }, auth: { tokens: ['start-sync-token-0123456789abcdef'] }, kubernetes: { accounts } }), 'vendor-driver.yml');
    const clock = new ManualClock(1_000_000);
    // The table's answers move this clock, as time passes for a replica whose sync waits on them.
    const slowTable = interceptedTable(table, (command, send) => send(command).finally(() => void clock.advance(1)));
    for (const [round, expected] of [
      [1, { added: 30, removed: 0, unchanged: 0 }],
      [2, { added: 0, removed: 0, unchanged: 30 }],
    ] as const) {
      const { log, records } = recordingLogger();
      const driver = await startDriverProcess({ file, table: slowTable, log, clock });
      await driver.close(0);
      const loaded = records.find((r) => r.msg === 'driver-defined accounts loaded');
      expect(loaded, `start ${round}`).toMatchObject(expected);
      expect(loaded?.ms, `start ${round}`).toBeGreaterThan(0);
    }
  });
});
