/** What the projector does for the database in the background as it applies messages: ANALYZE and VACUUM. */
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { analyzeDatabase, vacuumMempool, autovacuumOff } from '../store/maintenance.js';

/** applied messages between two background VACUUMs of mempool_txs when autovacuum is off (the default) */
export const VACUUM_EVERY = 20_000;

export class Maintenance {
  /** ANALYZE as the tables grow from empty (see refreshStatistics) */
  private analyzeAt = 64;
  private analyzing = false;
  /** VACUUM mempool_txs where nothing else does (see reclaimMempool) */
  private vacuumAt: number;
  private vacuuming = false;
  private autovacuumOff: boolean | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    /** the projector's count of applied messages */
    private readonly messagesApplied: () => number,
    private readonly vacuumEvery = VACUUM_EVERY,
  ) {
    this.vacuumAt = this.vacuumEvery;
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
   */
  private refreshStatistics(): void {
    if (this.messagesApplied() < this.analyzeAt || this.analyzing || this.analyzeAt > 1 << 20) return;
    while (this.analyzeAt <= this.messagesApplied()) this.analyzeAt *= 2;
    this.analyzing = true;
    analyzeDatabase(this.sql)
      .catch((err: unknown) => this.log.warn({ err }, 'ANALYZE failed'))
      .finally(() => (this.analyzing = false));
  }

  /** A full ANALYZE now (an import that ends), once the background one in flight has finished. */
  async fullStatistics(): Promise<void> {
    while (this.analyzing) await new Promise((r) => setTimeout(r, 50));
    await analyzeDatabase(this.sql);
  }

  /**
   * mempool_txs rows are rewritten at nearly every block (the reference's replace-by-fee, prune and restore rules), and
   * never in place: their flags are in index predicates, so no update is a HOT one. Where autovacuum is off (this
   * project's CI machines), nothing reclaimed those versions: a 100,000-block import left a 15 GB heap for 1.4 million
   * rows and slowed down as it grew (docs/benchmarks.md, Bulk import). So where autovacuum is off (PGlite reports it on) the
   * projector vacuums that table itself, in the background, every `vacuumEvery` applied messages.
   */
  private reclaimMempool(): void {
    if (this.messagesApplied() < this.vacuumAt || this.vacuuming) return;
    this.vacuumAt = this.messagesApplied() + this.vacuumEvery;
    this.vacuuming = true;
    (async () => {
      if (this.autovacuumOff === undefined) {
        this.autovacuumOff = await autovacuumOff(this.sql);
      }
      if (!this.autovacuumOff) return;
      const started = performance.now();
      await vacuumMempool(this.sql);
      this.log.debug({ ms: Math.round(performance.now() - started), applied: this.messagesApplied() }, 'projector: vacuumed mempool_txs');
    })()
      .catch((err: unknown) => this.log.warn({ err }, 'VACUUM mempool_txs failed'))
      .finally(() => (this.vacuuming = false));
  }
}
