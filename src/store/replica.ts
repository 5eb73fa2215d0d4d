/**
 * Where a read replica is in the primary's WAL, for an api process that reads from one (DATABASE_READ_URL).
 *
 * One poller per process reads `pg_last_wal_replay_lsn()` on the replica: every `pollMs` while someone waits for a
 * position (push messages held until the replica has replayed their commit), every `idleMs` otherwise. Each idle tick
 * also samples the primary's insert position with the time it was read; the replica's lag is the age of the oldest
 * sample (or waited-for position) it has not replayed yet: a time measured on this process's clock alone, true whether
 * the primary is busy or idle, whether the standby streams or is cut off.
 *
 * A replica that cannot be queried, or whose lag passes `maxLagMs`, is not usable: the api process is not ready and
 * its REST reads answer 503 until the replica catches up again.
 */
import type { Sql } from './sql.js';

/** An LSN (`16/B374D848`) as a number of bytes. */
export function parseLsn(text: string): bigint {
  const m = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!m) throw new Error(`not an LSN: ${text}`);
  return (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`);
}

export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

const PAGE = 8192n;
const SHORT_PAGE_HEADER = 24n;
const LONG_PAGE_HEADER = 40n;

/**
 * The primary's insert position as the position a standby reports once it has replayed everything before it. When
 * the last record ends exactly at a page boundary, `pg_current_wal_insert_lsn()` points past the next page's header
 * (24 bytes, 40 at the start of a segment) while the standby's replay position stops at the boundary; without this
 * correction an idle primary would look forever ahead by one header.
 */
export function replayableLsn(insertLsn: bigint, segmentBytes: bigint): bigint {
  if (insertLsn % segmentBytes === LONG_PAGE_HEADER) return insertLsn - LONG_PAGE_HEADER;
  if (insertLsn % PAGE === SHORT_PAGE_HEADER) return insertLsn - SHORT_PAGE_HEADER;
  return insertLsn;
}

/**
 * The primary's position right after a COMMIT, for a message built from what that COMMIT (and the ones before it)
 * wrote. The insert position is at or after the end of every record already inserted, our commit record included,
 * whatever `synchronous_commit` says (the write position, `pg_current_wal_lsn()`, can still be before an asynchronous
 * commit's record).
 */
export async function primaryCommitLsn(sql: Sql): Promise<string> {
  const [r] = await sql<{ lsn: string; seg: string }[]>`
    SELECT pg_current_wal_insert_lsn()::text AS lsn, current_setting('wal_segment_size') AS seg`;
  return formatLsn(replayableLsn(parseLsn(r.lsn), segmentSize(r.seg)));
}

/** `wal_segment_size` as SHOW prints it (`16MB`, `1GB`, or bytes). */
export function segmentSize(text: string): bigint {
  const m = /^(\d+)\s*(B|kB|MB|GB)?$/.exec(text.trim());
  if (!m) return 16n * 1024n * 1024n;
  const unit = { B: 1n, kB: 1024n, MB: 1024n * 1024n, GB: 1024n * 1024n * 1024n }[m[2] ?? 'B'] ?? 1n;
  return BigInt(m[1]) * unit;
}

export interface ReplicaStatus {
  /** the replica answered its last poll and is within the bound */
  ok: boolean;
  reachable: boolean;
  /** not a standby (promoted, or DATABASE_READ_URL is a primary): everything committed is visible */
  primary: boolean;
  /** milliseconds behind (0 when caught up); null before the first poll */
  lagMs: number | null;
  replayLsn: string | null;
  maxLagMs: number;
  /** why it is not usable */
  reason?: string;
}

export interface ReplicaMonitorOptions {
  maxLagMs: number;
  /** poll interval while a position is waited for (default 10 ms) */
  pollMs?: number;
  /** poll interval otherwise (default 500 ms) */
  idleMs?: number;
  /** a poll that takes longer counts as a failure (default 3000 ms) */
  timeoutMs?: number;
}

export class ReplicaMonitor {
  private replay = -1n;
  private isPrimary = false;
  private reachable = false;
  private polled = false;
  private error: string | undefined;
  /** positions the replica must reach, each with when it was first known (ascending by position) */
  private samples: { lsn: bigint; at: number }[] = [];
  private waiters = 0;
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private lastPrimarySample = 0;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly listeners: (() => void)[] = [];
  private readonly firstPoll: Promise<void>;
  private firstPollDone!: () => void;

  constructor(
    /** the replica */
    private readonly read: Sql,
    /** the primary (samples of its position); undefined: only waited-for positions measure the lag */
    private readonly primary: Sql | undefined,
    private readonly opts: ReplicaMonitorOptions,
  ) {
    this.firstPoll = new Promise((r) => (this.firstPollDone = r));
  }

  /** Starts polling; resolves after the first poll (successful or not). */
  start(): Promise<void> {
    this.loop ??= this.run();
    return this.firstPoll;
  }

  /** Called after every poll (the replay position may have moved, the status may have changed). */
  onPoll(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** True once the replica has replayed `lsn` (text form), or when it is not a standby. */
  replayed(lsn: string): boolean {
    return this.isPrimary || this.replay >= parseLsn(lsn);
  }

  /** A position someone waits for: the lag counts from now until it is replayed; polls go fast meanwhile. */
  expect(lsn: string): void {
    const n = parseLsn(lsn);
    this.note(n, Date.now());
  }

  /** How many callers hold positions: while > 0 the poller runs every `pollMs`. */
  hold(delta: 1 | -1): void {
    this.waiters = Math.max(0, this.waiters + delta);
    if (delta === 1) this.wake?.();
  }

  status(): ReplicaStatus {
    const lag = this.lagMs();
    const base = {
      reachable: this.reachable,
      primary: this.isPrimary,
      lagMs: this.polled && this.reachable ? lag : null,
      replayLsn: this.replay >= 0n ? formatLsn(this.replay) : null,
      maxLagMs: this.opts.maxLagMs,
    };
    if (!this.polled) return { ...base, ok: false, reason: 'read replica not checked yet' };
    if (!this.reachable) return { ...base, ok: false, reason: `read replica unreachable: ${this.error ?? 'no answer'}` };
    if (lag > this.opts.maxLagMs) {
      return { ...base, ok: false, reason: `read replica is ${lag} ms behind the primary (REPLICA_MAX_LAG_MS=${this.opts.maxLagMs})` };
    }
    return { ...base, ok: true };
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
  }

  private lagMs(): number {
    if (this.isPrimary) return 0;
    const oldest = this.samples.find((s) => s.lsn > this.replay);
    return oldest ? Math.max(0, Date.now() - oldest.at) : 0;
  }

  private note(lsn: bigint, at: number): void {
    if (lsn <= this.replay) return;
    const last = this.samples.at(-1);
    if (last && last.lsn >= lsn) return; // an earlier (or equal) sample already covers it, with an older time
    this.samples.push({ lsn, at });
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.pollOnce();
      if (!this.polled) {
        this.polled = true;
        this.firstPollDone();
      }
      for (const l of this.listeners) {
        try {
          l();
        } catch {
          /* a listener's failure is its own */
        }
      }
      if (this.stopped) break;
      const ms = this.waiters > 0 ? (this.opts.pollMs ?? 10) : (this.opts.idleMs ?? 500);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, ms);
        this.timer.unref?.();
      });
      this.wake = undefined;
    }
  }

  private async pollOnce(): Promise<void> {
    const timeout = this.opts.timeoutMs ?? 3000;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeout} ms`)), timeout);
    });
    try {
      const now = Date.now();
      // the primary's position is sampled BEFORE the replica's is read: a sample is never newer than what it measures
      if (this.primary && now - this.lastPrimarySample >= (this.opts.idleMs ?? 500)) {
        this.lastPrimarySample = now;
        try {
          const lsn = await Promise.race([primaryCommitLsn(this.primary), expired]);
          this.note(parseLsn(lsn), now);
        } catch {
          /* the primary's own check (readiness) reports it; the lag is then measured from what is known */
        }
      }
      const [r] = await Promise.race([
        this.read<{ replay: string | null; standby: boolean }[]>`
          SELECT pg_last_wal_replay_lsn()::text AS replay, pg_is_in_recovery() AS standby`,
        expired,
      ]);
      this.isPrimary = !r.standby;
      if (r.replay) this.replay = parseLsn(r.replay);
      this.reachable = true;
      this.error = undefined;
      while (this.samples.length && this.samples[0].lsn <= this.replay) this.samples.shift();
    } catch (err) {
      this.reachable = false;
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      clearTimeout(timer);
    }
  }
}
