/** The projector's figures: counters of what it applied, and the lag samples of the messages this process acknowledged. */
import { countProjection, metricsEnabled } from '../metrics.js';

export interface ProjectorMetrics {
  applied_id: number;
  /** the newest id this process appended or was told of */
  known_logged_id: number;
  messages_applied: number;
  batches: number;
  /** blocks sent without waiting for the statements before them (src/store/ingest/index.ts sendsWithoutWaiting) */
  blocks_sent_ahead: number;
  /** batches applied again, each block waiting, because a block sent ahead missed the one-statement path */
  send_ahead_retries: number;
  /** batches whose derived tables were applied after their commit, on the flusher's connection (ProjectorOptions.derivedBehindFrom) */
  derived_behind: number;
  /** ms from acknowledgement to projection commit, over the last 4,096 messages acknowledged by this process */
  lag_ms: { samples: number; p50: number | null; p99: number | null; max: number | null };
  failure: { id: number; reason: string; at: string } | null;
}

const LAG_SAMPLES = 4096;

export class ProjectorCounters {
  messagesApplied = 0;
  batches = 0;
  blocksSentAhead = 0;
  sendAheadRetries = 0;
  derivedBehind = 0;
  private readonly lags = new Float64Array(LAG_SAMPLES);
  private lagCount = 0;

  /** A batch committed: its messages' lags (those acknowledged by this process, `ackedAt` from performance.now()). */
  committed(batch: readonly { ackedAt?: number }[]): void {
    const now = performance.now();
    for (const m of batch) if (m.ackedAt !== undefined) this.lags[this.lagCount++ % LAG_SAMPLES] = now - m.ackedAt;
    if (metricsEnabled()) countProjection(batch.length, batch.flatMap((m) => (m.ackedAt === undefined ? [] : [now - m.ackedAt])));
    this.messagesApplied += batch.length;
    this.batches++;
  }

  metrics(applied: number, newest: number, failure: { id: number; reason: string; at: Date } | undefined): ProjectorMetrics {
    const n = Math.min(this.lagCount, LAG_SAMPLES);
    const sorted = Array.from(this.lags.subarray(0, n)).sort((a, b) => a - b);
    const q = (p: number) => (n ? Math.round(sorted[Math.min(n - 1, Math.floor(p * n))] * 10) / 10 : null);
    return {
      applied_id: applied,
      known_logged_id: newest,
      messages_applied: this.messagesApplied,
      batches: this.batches,
      blocks_sent_ahead: this.blocksSentAhead,
      send_ahead_retries: this.sendAheadRetries,
      derived_behind: this.derivedBehind,
      lag_ms: { samples: n, p50: q(0.5), p99: q(0.99), max: n ? Math.round(sorted[n - 1] * 10) / 10 : null },
      failure: failure ? { id: failure.id, reason: failure.reason, at: failure.at.toISOString() } : null,
    };
  }
}
