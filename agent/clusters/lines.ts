/** Watch bodies are one JSON document per line; batches of them arrive as buffers. */
/** The non-empty lines of a batch of lines. */
export function splitLines(batch: Uint8Array): string[] {
  const buf = Buffer.from(batch.buffer, batch.byteOffset, batch.byteLength);
  const lines: string[] = [];
  let start = 0;
  for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
    if (nl > start) lines.push(buf.toString('utf8', start, nl));
    start = nl + 1;
  }
  if (start < buf.length) lines.push(buf.toString('utf8', start));
  return lines;
}
