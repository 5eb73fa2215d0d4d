/**
 * Which push rooms are worth building messages for (PUSH_ROOMS=subscribed, the default).
 *
 * Building a room's message costs queries and bytes (an address room needs the principal's balance and STX flows,
 * every message is stored in push_messages for resume); most rooms of a busy chain have nobody listening. So the api
 * processes record the rooms their clients follow in push_interest (sql/0011_push_interest.sql), and the publisher
 * builds and stores messages for those rooms only:
 *
 *  - a room is listed while some api process has a subscriber in it (`until` is refreshed every `refreshMs`), and
 *    for the resume window after its last subscriber left: a client that reconnects with its cursor within the window
 *    gets every message it missed, as before;
 *  - the table survives restarts: clients reconnecting after a restart resume completely;
 *  - a new room is written (and announced with NOTIFY push_interest) before the subscription is acknowledged, so a
 *    publisher in another process knows of it before the client's next message is committed; a publisher in the same
 *    process learns of it synchronously.
 *
 * A publisher that has not loaded the table yet builds every room.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import { interestRows, pruneInterest, recordInterest } from '../store/push-interest.js';

export interface RoomFilter {
  /** messages for this room are wanted */
  wants(room: string): boolean;
  /** some room of this kind (`block`, `transaction`, `address-transaction`, … : the part before ':') is wanted */
  wantsKind(kind: string): boolean;
  /** any room at all is wanted */
  wantsAny(): boolean;
}

export const ALL_ROOMS: RoomFilter = { wants: () => true, wantsKind: () => true, wantsAny: () => true };

export function roomKind(room: string): string {
  const i = room.indexOf(':');
  return i < 0 ? room : room.slice(0, i);
}

const CHANNEL = 'push_interest';
/** NOTIFY payloads must stay under 8000 bytes */
const NOTIFY_BYTES = 7000;

/**
 * The publisher's view of push_interest: room → owner → until (ms), loaded at start, kept current by NOTIFY and a
 * full reload every `reloadMs`. The entries of this process's own recorder (`localOwner`) come from it directly.
 */
export class InterestView implements RoomFilter {
  private readonly rooms = new Map<string, Map<string, number>>();
  /** newest `until` per kind and overall; recomputed when an entry was lowered */
  private kindUntil = new Map<string, number>();
  private anyUntil = 0;
  private lowered = false;
  private loaded = false;
  private timer?: NodeJS.Timeout;
  private unlisten?: () => Promise<void>;
  /** the owner id of a recorder in this process (its notifications are ignored: it notes directly) */
  localOwner?: string;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly opts: { reloadMs?: number; listen?: boolean } = {},
  ) {}

  /** Loads the table, then follows it (NOTIFY, and a full reload every `reloadMs`, default 30 s). */
  async start(): Promise<void> {
    if (this.opts.listen) {
      const l = await this.sql.listen(
        CHANNEL,
        (payload) => this.onNotify(payload),
        // (re)connected: what was announced while the listener was down comes with a reload
        () => void this.reload().catch((err) => this.log.warn({ err }, 'push interest reload failed')),
      );
      this.unlisten = l.unlisten;
    }
    await this.reload();
    this.timer = setInterval(() => {
      this.reload()
        .then(() => pruneInterest(this.sql))
        .catch((err) => this.log.warn({ err }, 'push interest reload failed'));
    }, this.opts.reloadMs ?? 30_000);
    this.timer.unref();
  }

  /** The table replaces every other owner's entries; this process's own stay as noted. */
  async reload(): Promise<void> {
    const rows = await interestRows(this.sql);
    const now = Date.now();
    for (const [room, owners] of this.rooms) {
      for (const [owner, u] of owners) if (owner !== this.localOwner || u <= now) owners.delete(owner);
      if (!owners.size) this.rooms.delete(room);
    }
    for (const r of rows) if (r.owner !== this.localOwner) this.set(r.room, r.owner, r.until);
    this.recompute();
    this.loaded = true;
  }

  /** `owner` follows `room` until `untilMs` (replaces what that owner said before). */
  set(room: string, owner: string, untilMs: number): void {
    let owners = this.rooms.get(room);
    if (!owners) this.rooms.set(room, (owners = new Map()));
    const before = owners.get(owner) ?? 0;
    owners.set(owner, untilMs);
    if (untilMs < before) this.lowered = true;
    const kind = roomKind(room);
    if ((this.kindUntil.get(kind) ?? 0) < untilMs) this.kindUntil.set(kind, untilMs);
    if (this.anyUntil < untilMs) this.anyUntil = untilMs;
  }

  private recompute(): void {
    this.kindUntil = new Map();
    this.anyUntil = 0;
    for (const [room, owners] of this.rooms) {
      const kind = roomKind(room);
      for (const u of owners.values()) {
        if ((this.kindUntil.get(kind) ?? 0) < u) this.kindUntil.set(kind, u);
        if (this.anyUntil < u) this.anyUntil = u;
      }
    }
    this.lowered = false;
  }

  private onNotify(payload: string): void {
    try {
      const n = JSON.parse(payload) as { o: string; r: [string, number][] };
      if (n.o === this.localOwner) return;
      for (const [room, u] of n.r) this.set(room, n.o, u);
    } catch (err) {
      this.log.warn({ err }, 'bad push_interest notification');
    }
  }

  wants(room: string): boolean {
    if (!this.loaded) return true;
    const owners = this.rooms.get(room);
    if (!owners) return false;
    const now = Date.now();
    for (const u of owners.values()) if (u > now) return true;
    return false;
  }
  wantsKind(kind: string): boolean {
    if (!this.loaded) return true;
    if (this.lowered) this.recompute();
    return (this.kindUntil.get(kind) ?? 0) > Date.now();
  }
  wantsAny(): boolean {
    if (!this.loaded) return true;
    if (this.lowered) this.recompute();
    return this.anyUntil > Date.now();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.unlisten?.().catch(() => {});
  }
}

/**
 * An api process's side: counts its subscribers per room (Socket.IO and JSON-RPC alike) and keeps push_interest up
 * to date: a room's first subscriber writes it (batched: one statement for every room added within a tick), every
 * `refreshMs` the followed rooms are extended, and a room whose last subscriber left stays for `windowMs`.
 */
export class InterestRecorder {
  private readonly count = new Map<string, number>();
  /** until (ms) last written per room: a subscriber to a room written recently enough costs nothing */
  private readonly written = new Map<string, number>();
  private queue = new Map<string, number>();
  private flushing?: Promise<void>;
  private readonly timer: NodeJS.Timeout;
  /** this process's id in push_interest.owner */
  readonly owner = randomBytes(8).toString('hex');

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly opts: {
      windowMs: number;
      refreshMs?: number;
      /** a publisher in this process: told synchronously */
      local?: InterestView;
    },
  ) {
    if (opts.local) opts.local.localOwner = this.owner;
    this.timer = setInterval(() => this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  private get refreshMs(): number {
    return this.opts.refreshMs ?? 60_000;
  }

  /** A subscriber joined `room`; resolves once the room is recorded (at once if it already was, recently enough). */
  add(room: string): Promise<void> {
    this.count.set(room, (this.count.get(room) ?? 0) + 1);
    return this.record([room]);
  }

  /**
   * Makes sure these rooms are recorded as followed (call before acknowledging a subscription): resolves once they
   * are written, at once for rooms written recently enough. Never rejects (a failed write is logged).
   */
  record(rooms: string[]): Promise<void> {
    const now = Date.now();
    const until = now + this.opts.windowMs + this.refreshMs;
    const due: [string, number][] = [];
    for (const room of rooms) {
      this.opts.local?.set(room, this.owner, until);
      // written with at least half a refresh period to spare: nothing to do
      if ((this.written.get(room) ?? 0) <= now + this.opts.windowMs + this.refreshMs / 2) due.push([room, until]);
    }
    return due.length ? this.write(due) : Promise.resolve();
  }

  /** A subscriber left `room`. The room stays wanted for the resume window. */
  remove(room: string): void {
    const n = (this.count.get(room) ?? 0) - 1;
    if (n > 0) {
      this.count.set(room, n);
      return;
    }
    this.count.delete(room);
    const until = Date.now() + this.opts.windowMs;
    this.opts.local?.set(room, this.owner, until);
    // the row written lasts at least as long (other processes keep building it a little longer, never shorter)
    if ((this.written.get(room) ?? 0) < until) void this.write([[room, until]]);
  }

  /** Every followed room is extended (so it outlives this process by the resume window, not more). */
  private refresh(): void {
    const until = Date.now() + this.opts.windowMs + this.refreshMs;
    const entries: [string, number][] = [...this.count.keys()].map((r) => [r, until]);
    for (const [r, u] of entries) this.opts.local?.set(r, this.owner, u);
    for (const [r, u] of this.written) if (u < Date.now()) this.written.delete(r);
    if (entries.length) void this.write(entries);
  }

  private write(entries: [string, number][]): Promise<void> {
    for (const [r, u] of entries) if ((this.queue.get(r) ?? 0) < u) this.queue.set(r, u);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
    return this.flushing;
  }

  private async flush(): Promise<void> {
    const batch = [...this.queue];
    this.queue = new Map();
    this.flushing = undefined;
    if (!batch.length) return;
    try {
      const rooms = batch.map(([r]) => r);
      const untils = batch.map(([, u]) => u / 1000);
      const notices: string[] = [];
      let chunk: [string, number][] = [];
      let bytes = 40;
      const notice = () => JSON.stringify({ o: this.owner, r: chunk });
      for (const e of batch) {
        const size = JSON.stringify(e).length + 1;
        if (bytes + size > NOTIFY_BYTES && chunk.length) {
          notices.push(notice());
          chunk = [];
          bytes = 40;
        }
        chunk.push(e);
        bytes += size;
      }
      if (chunk.length) notices.push(notice());
      await recordInterest(this.sql, this.owner, rooms, untils, CHANNEL, notices);
      for (const [r, u] of batch) this.written.set(r, u);
    } catch (err) {
      this.log.warn({ err, rooms: batch.length }, 'could not record push interest (publishers in other processes may miss these rooms)');
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
  }
}
