import { Writable } from 'node:stream';
import pino from 'pino';

/** A logger keeping every record it is given, parsed. */
export function recordingLogger(): { log: pino.Logger; records: Record<string, unknown>[] } {
  const records: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info', base: {} }, sink), records };
}
