// Reading a request body from uWS, shared by the router and the /v2 proxy.
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import { HttpError } from './response.js';
import { PulseError } from '../errors.js';

/** The client went away before the body was read. */
export class RequestAborted extends PulseError {}

/** What the reader needs of a request's state; `onAbort` is set by the reader and called by the owner's onAborted. */
export interface BodyExchange {
  res: UwsResponse;
  aborted: boolean;
  /** true once a reply was sent: the rest of the body is ignored */
  done?: boolean;
  onAbort: (() => void) | undefined;
}

/**
 * Collects the request body (copying every chunk: uWS neuters them). Must be called synchronously in the uWS handler.
 * Over `limit` bytes: rejects with HttpError 413 and stops collecting. Rejects with RequestAborted when the client goes away.
 */
export function readRequestBody(ex: BodyExchange, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let finished = false;
    ex.onAbort = () => {
      if (finished) return;
      finished = true;
      reject(new RequestAborted());
    };
    ex.res.onData((chunk, isLast) => {
      if (finished || ex.done || ex.aborted) return;
      total += chunk.byteLength;
      if (total > limit) {
        finished = true;
        chunks.length = 0;
        reject(new HttpError(413, `Request body is larger than ${limit} bytes`));
        return;
      }
      if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk))); // copy
      if (isLast) {
        finished = true;
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
      }
    });
  });
}
