/** The ingest status: the log's position as the database records it, with this process's projector figures. */
import type { ProjectorRow } from '../store/event-log.js';
import type { ProjectorMetrics } from './metrics.js';

export interface IngestStatus {
  state: 'caught_up' | 'applying' | 'failed';
  acknowledged_id: number;
  applied_id: number;
  applied_at: string | null;
  pending_messages: number;
  /** ms since the oldest message not applied yet arrived (0 when caught up) */
  behind_ms: number;
  failure: { id: number; reason: string; at: string | null } | null;
  /** this process's projector (null where no observer runs) */
  process: ProjectorMetrics | null;
}

/** The ingest status routes' answer (GET /extended/v1/status/ingest, the observer's GET /status). */
export function ingestStatus(row: ProjectorRow, metrics: ProjectorMetrics | undefined, now = Date.now()): IngestStatus {
  const failure =
    row.failed_id !== null
      ? { id: row.failed_id, reason: row.failed_reason ?? '', at: row.failed_at?.toISOString() ?? null }
      : metrics?.failure ?? null;
  return {
    state: failure ? 'failed' : row.pending > 0 ? 'applying' : 'caught_up',
    acknowledged_id: row.logged_id,
    applied_id: row.applied_id,
    applied_at: row.applied_at?.toISOString() ?? null,
    pending_messages: row.pending,
    behind_ms: row.oldest_pending_at ? Math.max(0, now - row.oldest_pending_at.getTime()) : 0,
    failure,
    process: metrics ?? null,
  };
}
