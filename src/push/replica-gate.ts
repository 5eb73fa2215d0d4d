/**
 * Holds push messages until this process's read replica has replayed the COMMIT that produced them, then releases
 * them in publication order. A client told about block N by this process can read block N from it at once.
 *
 * Each batch carries the primary's WAL position after its COMMIT (PublishedMessage.lsn, set by the publisher). The
 * replica's replay position comes from the process's one ReplicaMonitor, which polls fast while anything is held; a
 * batch whose position is already replayed (or that carries none) goes at once when nothing is held before it.
 */
import type { ReplicaMonitor } from '../store/replica.js';
import { parseLsn } from '../store/replica.js';
import type { PublishedMessage } from '../store/push-log.js';

export class ReplicaGate {
  private readonly queue: { msgs: PublishedMessage[]; lsn: string | undefined }[] = [];
  private holding = false;
  /** batches held since start, and held now */
  heldBatches = 0;

  constructor(
    private readonly monitor: ReplicaMonitor,
    private readonly release: (msgs: PublishedMessage[]) => void,
  ) {
    monitor.onPoll(() => this.drain());
  }

  /** Messages waiting for the replica. */
  get waiting(): number {
    let n = 0;
    for (const b of this.queue) n += b.msgs.length;
    return n;
  }

  push(msgs: PublishedMessage[]): void {
    if (!msgs.length) return;
    const lsn = newest(msgs);
    if (!this.queue.length && (lsn === undefined || this.monitor.replayed(lsn))) {
      this.release(msgs);
      return;
    }
    this.queue.push({ msgs, lsn });
    this.heldBatches++;
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
