/**
 * Decoding node messages off the main thread. A pool of worker threads (decode-worker.ts) parses, validates and
 * decodes batches of messages while the main thread talks to the database; each batch's results come back in the
 * batch's order, and a caller that awaits its batches in submission order gets the log order. At most `maxInFlight`
 * batches are being decoded or waiting to be collected at once: a caller that submits more waits for a slot, so
 * decoded messages never pile up ahead of the database.
 *
 * With 0 threads (DECODE_THREADS=0), or where the compiled worker does not exist (the TypeScript sources run
 * directly, as under vitest), the same decoder runs in the calling thread: same code, same results.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { decodeMessageResult } from './decode.js';
import type { DecodeInput, DecodeResult } from '../chain/decoded.js';
import type { DecodeReply, DecodeRequest } from './decode-worker.js';

/** Decodes batches of messages; results in the batch's order. */
export interface MessageDecoder {
  /** worker threads decoding (0: the calling thread decodes) */
  readonly threads: number;
  decode(batch: DecodeInput[]): Promise<DecodeResult[]>;
  /** stops the workers (batches in flight are decoded in this thread instead) */
  close(): Promise<void>;
}

/** The default number of decode threads: one core is left to the main thread; 1 to 4. */
export function defaultDecodeThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, cores - 1));
}

/** Decodes in the calling thread. */
export const inThreadDecoder: MessageDecoder = {
  threads: 0,
  decode: async (batch) => batch.map(decodeMessageResult),
  close: async () => undefined,
};

/** The compiled worker beside this module, or undefined when it is not there (TypeScript sources run directly). */
function workerFile(): URL | undefined {
  const url = new URL('./decode-worker.js', import.meta.url);
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
}

interface Waiting {
  batch: DecodeInput[];
  resolve: (r: DecodeResult[]) => void;
}

class DecodeWorker {
  readonly pending = new Map<number, Waiting>();
  private readonly worker: Worker;
  dead = false;

  constructor(
    file: URL,
    private readonly onExit: (w: DecodeWorker, err: Error) => void,
  ) {
    this.worker = new Worker(file);
    this.worker.unref();
    this.worker.on('message', (reply: DecodeReply) => {
      const w = this.pending.get(reply.id);
      if (!w) return;
      this.pending.delete(reply.id);
      if (!this.pending.size) this.worker.unref();
      w.resolve(reply.results);
    });
    this.worker.on('error', (err) => this.exited(err));
    this.worker.on('exit', (code) => this.exited(new Error(`decode worker exited with code ${code}`)));
  }

  private exited(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.onExit(this, err);
  }

  send(id: number, w: Waiting): void {
    if (!this.pending.size) this.worker.ref(); // a batch in flight keeps the process alive until it is answered
    this.pending.set(id, w);
    const req: DecodeRequest = { id, batch: w.batch };
    this.worker.postMessage(req);
  }

  async terminate(): Promise<void> {
    this.dead = true;
    await this.worker.terminate();
  }
}

class DecodePool implements MessageDecoder {
  private workers: DecodeWorker[];
  private nextId = 1;
  private inFlight = 0;
  private readonly slots: (() => void)[] = [];

  constructor(
    file: URL,
    threads: number,
    private readonly maxInFlight: number,
    private readonly log?: Logger,
  ) {
    this.workers = Array.from({ length: threads }, () => new DecodeWorker(file, (w, err) => this.lost(w, err)));
  }

  get threads(): number {
    return this.workers.length;
  }

  async decode(batch: DecodeInput[]): Promise<DecodeResult[]> {
    if (!batch.length) return [];
    while (this.inFlight >= this.maxInFlight) await new Promise<void>((r) => this.slots.push(r));
    this.inFlight++;
    try {
      const worker = this.leastBusy();
      if (!worker) return batch.map(decodeMessageResult);
      return await new Promise<DecodeResult[]>((resolve) => worker.send(this.nextId++, { batch, resolve }));
    } finally {
      this.inFlight--;
      this.slots.shift()?.();
    }
  }

  private leastBusy(): DecodeWorker | undefined {
    let best: DecodeWorker | undefined;
    for (const w of this.workers) if (!w.dead && (!best || w.pending.size < best.pending.size)) best = w;
    return best;
  }

  /** A worker died (it should not): its batches are decoded here, and the others carry on. */
  private lost(w: DecodeWorker, err: Error): void {
    this.workers = this.workers.filter((x) => x !== w);
    if (w.pending.size) this.log?.error({ err, batches: w.pending.size }, 'decode worker lost: its batches are decoded in the main thread');
    for (const p of w.pending.values()) p.resolve(p.batch.map(decodeMessageResult));
    w.pending.clear();
  }

  async close(): Promise<void> {
    const ws = this.workers;
    this.workers = [];
    for (const w of ws) {
      for (const p of w.pending.values()) p.resolve(p.batch.map(decodeMessageResult));
      w.pending.clear();
    }
    await Promise.all(ws.map((w) => w.terminate()));
  }
}

/**
 * A decoder with `threads` worker threads (0: the calling thread), at most `maxInFlight` batches (default two per
 * thread, at least 2) out at once. Falls back to the calling thread when the compiled worker is not there.
 */
export function createDecoder(threads: number, opts: { maxInFlight?: number; log?: Logger } = {}): MessageDecoder {
  if (threads <= 0) return inThreadDecoder;
  const file = workerFile();
  if (!file) {
    opts.log?.debug('decode worker not built (TypeScript sources): decoding in the main thread');
    return inThreadDecoder;
  }
  return new DecodePool(file, threads, opts.maxInFlight ?? Math.max(2, 2 * threads), opts.log);
}
