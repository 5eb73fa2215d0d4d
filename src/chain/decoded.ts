/**
 * A node message decoded into its update, as the observer's decoder (src/observer/decode.ts, in this thread or in a
 * worker) returns it and the projector takes it: a plain value that survives a structured clone.
 */
import type { ChainUpdate } from './types.js';

export type DecodeResult =
  /** `unknownPath`: not a node route the service knows; stored raw, nothing derived */
  | { ok: true; update: ChainUpdate; unknownPath?: true }
  /** the message does not validate or its transactions do not decode */
  | { ok: false; rejected: string }
  /** decoding failed for another reason (a fault of this service, not of the message) */
  | { ok: false; failed: string };

/** What a decoder is given: the normalized observer path, the body, and when it arrived (ms since the epoch). */
export interface DecodeInput {
  path: string;
  body: string;
  receivedAt: number;
}
