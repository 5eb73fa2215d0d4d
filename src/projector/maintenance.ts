/** What the projector does for the database in the background as it applies messages: ANALYZE and VACUUM. */
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { analyzeDatabase, analyzeIndexedColumns, vacuumChurnedTables, autovacuumOff } from '../store/maintenance.js';

/** applied messages between two background VACUUMs of mempool_txs and mempool_pending when autovacuum is off (the default) */
export const VACUUM_EVERY = 20_000;

/**
 * applied messages between two background VACUUMs of mempool_pending alone when autovacuum is off: every pending tx
 * leaves a deleted row there, and the garbage collection at each block walks its receipt-height index, dead entries
 * included. The table holds the pending mempool only, so a VACUUM of it takes milliseconds.
 */
export const VACUUM_PENDING_EVERY = 1_000;

export class Maintenance {
  /** ANALYZE as the tables grow from empty (see refreshStatistics) */
  private analyzeAt = 64;
  private analyzing = false;
  /** VACUUM mempool_txs where nothing else does (see reclaimMempool) */
  private vacuumAt: number;
  private pendingVacuumAt: number;
  private vacuuming = false;
  private autovacuumOff: boolean | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    /** the projector's count of applied messages */
    private readonly messagesApplied: () => number,
    private readonly vacuumEvery = VACUUM_EVERY,
    /** what the growth ANALYZEs cover (ProjectorOptions.growthStatistics) */
    private readonly growthStatistics: 'all' | 'indexed' = 'all',
  ) {
    this.vacuumAt = this.vacuumEvery;
    this.pendingVacuumAt = Math.min(VACUUM_PENDING_EVERY, this.vacuumEvery);
  }

  /** After each committed batch. */
  committed(): void {
    this.refreshStatistics();
    this.reclaimMempool();
  }

  /**
   * A database filled from empty (a node syncing from genesis, import-events) grows much faster than autovacuum
   * re-analyzes it (once a minute at best): the statements' plans, made when the tables were nearly empty, go on
   * scanning whole tables. So the projector runs ANALYZE itself, in the background, each time its count of applied
   * messages doubles from 64 up to about a million; past that the tables are big enough for autovacuum's pace.
   * With growthStatistics 'indexed' (an import, which ends with a whole ANALYZE), only the columns indexes name: about
   * half the time in an import, for the same statistics on every column a plan of the projector's statements rests on.
   */
  private refreshStatistics(): void {
    if (this.messagesApplied() < this.analyzeAt || this.analyzing || this.analyzeAt > 1 << 20) return;
    while (this.analyzeAt <= this.messagesApplied()) this.analyzeAt *= 2;
    this.analyzing = true;
    (this.growthStatistics === 'indexed' ? analyzeIndexedColumns(this.sql) : analyzeDatabase(this.sql))
      .catch((err: unknown) => this.log.warn({ err }, 'ANALYZE failed'))
      .finally(() => (this.analyzing = false));
  }

  /**
   * A full ANALYZE now (an import that ends), once the background one in flight has finished; `parallel` tables at
   * once (analyzeDatabase).
   */
  async fullStatistics(parallel = 1): Promise<void> {
    while (this.analyzing) await new Promise((r) => setTimeout(r, 50));
    await analyzeDatabase(this.sql, undefined, parallel);
  }

  /**
   * mempool_txs rows are rewritten at nearly every block (the reference's replace-by-fee, prune and restore rules), and
   * every pending tx enters and leaves mempool_pending. Where autovacuum is off (this project's CI machines), nothing
   * reclaimed those versions: a 100,000-block import once left a 15 GB heap for 1.4 million rows and slowed down as it
   * grew (docs/benchmarks.md, Bulk import). The rewrites of mempool_txs are heap-only updates now, whose dead versions
   * each page reclaims as it is read, but the deleted rows of mempool_pending still need a VACUUM. So where autovacuum
   * is off (PGlite reports it on) the projector vacuums them itself, in the background: mempool_pending every
   * VACUUM_PENDING_EVERY applied messages, both tables every `vacuumEvery`. The tables a batch fills with its deferred
   * derived rows and empties once they are applied (derived_deferred, nft_custody_deferred) go with mempool_pending: left
   * alone they grew by every row ever deferred (3.3 MB of dead rows after 2,000 blocks), and each batch's flush read
   * them whole (on a 30,000-block import, NFT custody's flush went from 18 to 72 ms).
   */
  private reclaimMempool(): void {
    const applied = this.messagesApplied();
    if ((applied < this.vacuumAt && applied < this.pendingVacuumAt) || this.vacuuming) return;
    const both = applied >= this.vacuumAt;
    if (both) this.vacuumAt = applied + this.vacuumEvery;
    this.pendingVacuumAt = applied + Math.min(VACUUM_PENDING_EVERY, this.vacuumEvery);
    this.vacuuming = true;
    (async () => {
      if (this.autovacuumOff === undefined) {
        this.autovacuumOff = await autovacuumOff(this.sql);
      }
      if (!this.autovacuumOff) return;
      const started = performance.now();
      await vacuumChurnedTables(this.sql, both);
      this.log.debug({ ms: Math.round(performance.now() - started), applied: this.messagesApplied(), both }, 'projector: vacuumed the mempool and deferred-row tables');
    })()
      .catch((err: unknown) => this.log.warn({ err }, 'VACUUM of the mempool and deferred-row tables failed'))
      .finally(() => (this.vacuuming = false));
  }
}
