/**
 * Holds push messages until this process's read replica has replayed the COMMIT that produced them, then releases
 * them in publication order. A client told about block N by this process can read block N from it at once.
 *
 * Each batch carries the primary's WAL position after its COMMIT (PublishedMessage.lsn, set by the publisher). The
 * replica's replay position comes from the process's one ReplicaMonitor, which polls fast while anything is held; a
 * batch whose position is already replayed (or that carries none) goes at once when nothing is held before it.
 *
 * Memory is bounded: a replica that stops replaying (paused, stuck on a conflict, cut off from the primary) would
 * otherwise make the queue grow with every block. At most `maxHeld` messages are held (the newest batch is always
 * kept, even when it alone is larger); past that, the oldest held batches are dropped. Nothing is lost for clients:
 * every dropped message is in push_messages, and the first batch released after a drop does not follow the last
 * cursor delivered, so the push server makes this process's clients resume by cursor, from the replica, which by
 * then has replayed the dropped messages too (they were committed before the batch being released).
 */
import type { ReplicaMonitor } from '../store/replica.js';
import { parseLsn } from '../store/replica.js';
import type { PublishedMessage } from '../store/push-log.js';

export interface ReplicaGateOptions {
  /** messages held at most (the newest batch is kept whatever its size) */
  maxHeld: number;
}

export class ReplicaGate {
  private readonly queue: { msgs: PublishedMessage[]; lsn: string | undefined }[] = [];
  private holding = false;
  private held = 0;
  /** batches held since start */
  heldBatches = 0;
  /** messages dropped since start because more than `maxHeld` were waiting */
  dropped = 0;

  constructor(
    private readonly monitor: ReplicaMonitor,
    private readonly release: (msgs: PublishedMessage[]) => void,
    private readonly opts: ReplicaGateOptions,
  ) {
    if (!(opts.maxHeld >= 1)) throw new Error('maxHeld must be at least 1');
    monitor.onPoll(() => this.drain());
  }

  /** Messages waiting for the replica. */
  get waiting(): number {
    return this.held;
  }

  push(msgs: PublishedMessage[]): void {
    if (!msgs.length) return;
    const lsn = newest(msgs);
    if (!this.queue.length && (lsn === undefined || this.monitor.replayed(lsn))) {
      this.release(msgs);
      return;
    }
    this.queue.push({ msgs, lsn });
    this.held += msgs.length;
    this.heldBatches++;
    while (this.held > this.opts.maxHeld && this.queue.length > 1) {
      const old = this.queue.shift()!;
      this.held -= old.msgs.length;
      this.dropped += old.msgs.length;
    }
    if (lsn !== undefined) this.monitor.expect(lsn);
    if (!this.holding) {
      this.holding = true;
      this.monitor.hold(1);
    }
  }

  /** Releases, in order, every held batch the replica has replayed. */
  drain(): void {
    while (this.queue.length) {
      const head = this.queue[0];
      if (head.lsn !== undefined && !this.monitor.replayed(head.lsn)) break;
      this.queue.shift();
      this.held -= head.msgs.length;
      this.release(head.msgs);
    }
    if (!this.queue.length && this.holding) {
      this.holding = false;
      this.monitor.hold(-1);
    }
  }
}

function newest(msgs: PublishedMessage[]): string | undefined {
  let best: string | undefined;
  for (const m of msgs) if (m.lsn && (best === undefined || parseLsn(m.lsn) > parseLsn(best))) best = m.lsn;
  return best;
}
