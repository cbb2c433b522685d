import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { openPorts, portsLeftOpen } from './threads.ts';

describe('the threads a test file leaves behind', () => {
  it('counts worker threads and message ports only', () => {
    expect(openPorts(['TCPSocketWrap', 'MessagePort', 'Timeout', 'Worker', 'MessagePort', 'FSReqCallback'])).toBe(3);
  });

  it('finds a port left listening, and none once it is closed', async () => {
    const before = openPorts();
    const { port1, port2 } = new MessageChannel();
    port1.on('message', () => undefined);
    try {
      expect(await portsLeftOpen(before, 0)).toBe(1);
    } finally {
      port1.close();
      port2.close();
    }
    expect(await portsLeftOpen(before)).toBe(0);
  });
});
