/**
 * A decode worker thread (started by decode-pool.ts): decodes each batch it is sent and posts the results back, in
 * the batch's order, under the batch's id.
 */
import { parentPort } from 'node:worker_threads';
import { decodeMessageResult } from './decode.js';
import type { DecodeInput, DecodeResult } from '../chain/decoded.js';

export interface DecodeRequest {
  id: number;
  batch: DecodeInput[];
}

export interface DecodeReply {
  id: number;
  results: DecodeResult[];
}

if (!parentPort) throw new Error('decode-worker.js runs as a worker thread of stacks-pulse, not on its own');
const port = parentPort;
port.on('message', (req: DecodeRequest) => {
  const reply: DecodeReply = { id: req.id, results: req.batch.map(decodeMessageResult) };
  port.postMessage(reply);
});
