/** A decoder thread (decoder.ts): decodes what the main thread sends and answers with the same id. */
import { parentPort } from 'node:worker_threads';
import { decodeBatch, decodeList, type KindInfo } from './decode.ts';

type Request = { id: number; info: KindInfo } & ({ op: 'batch'; batch: Uint8Array } | { op: 'list'; body: string });

parentPort?.on('message', (req: Request) => {
  try {
    const result = req.op === 'batch' ? decodeBatch(req.batch, req.info) : decodeList(req.body, req.info);
    parentPort?.postMessage({ id: req.id, result });
  } catch (e) {
    parentPort?.postMessage({ id: req.id, error: (e as Error).message });
  }
});
