/**
 * Decoding one node message: JSON parse → validation (schemas.ts) → transaction decoding with the native codec
 * (to-update.ts). Pure and synchronous, so it runs the same in the main thread and in a decode worker
 * (decode-worker.ts, pooled by decode-pool.ts). Its result is a plain value that survives a structured clone.
 */
import type { ChainUpdate } from '../chain/types.js';
import type { DecodeInput, DecodeResult } from '../chain/decoded.js';
import { isObserverPath, validateObserverMessage } from './schemas.js';
import { MessageDecodeError, messageToUpdate } from './to-update.js';
import { PulseError } from '../errors.js';

/** A message that is not a valid node message: why (the observer answers it 400 and keeps it as a dead letter). */
export class Rejected extends PulseError {}

/**
 * Parses, validates and decodes one message. Throws Rejected for a bad message; an unknown path is a raw message
 * (`{ kind: 'raw' }`). `receivedAt` (ms) becomes a mempool transaction's receipt time.
 */
export function decodeOrReject(path: string, text: string, receivedAt: number): { update: ChainUpdate; unknownPath?: true } {
  let parsed: unknown;
  try {
    if (text.trim() === '') throw new SyntaxError('body is empty: expected a JSON document');
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Rejected(`invalid JSON: ${(err as Error).message}`);
  }
  if (!isObserverPath(path)) return { update: { kind: 'raw' }, unknownPath: true };
  const v = validateObserverMessage(path, parsed);
  if (!v.ok) throw new Rejected(v.message);
  try {
    return { update: messageToUpdate(v, Math.floor(receivedAt / 1000)) };
  } catch (err) {
    if (err instanceof MessageDecodeError) throw new Rejected(err.message);
    throw err;
  }
}

/** decodeOrReject as a value that never throws (what a worker sends back). */
export function decodeMessageResult(m: DecodeInput): DecodeResult {
  try {
    const r = decodeOrReject(m.path, m.body, m.receivedAt);
    return r.unknownPath ? { ok: true, update: r.update, unknownPath: true } : { ok: true, update: r.update };
  } catch (err) {
    if (err instanceof Rejected) return { ok: false, rejected: err.message };
    return { ok: false, failed: (err as Error)?.stack ?? String(err) };
  }
}
