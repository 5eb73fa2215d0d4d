/**
 * Comparing a received Socket.IO stream with a golden `<scenario>.socketio.json` stream. Per room (= event name):
 * same messages in the same order, structurally equal after removing volatile values (stripVolatile). SPEC.md's
 * deliberate departures from the reference are applied here, in pushSpecDecisions(), and nowhere else.
 */
import { isDeepStrictEqual } from 'node:util';
import { firstDifference, stripVolatile } from './golden-compare.js';
import type { FixtureLine } from './fixtures.js';

export interface GoldenPushMessage {
  seq: number;
  after_event_line: number;
  event: string;
  args: unknown[];
}

export interface ReceivedMessage {
  event: string;
  args: unknown[];
  /** fixture line after which it arrived (ours) or was recorded (golden) */
  line?: number;
}

/** Removes our trailing `{cursor…}` argument (new in stacks-pulse; SPEC.md: existing clients ignore it). */
export function withoutCursor(m: ReceivedMessage): ReceivedMessage {
  const last = m.args.at(-1);
  if (last && typeof last === 'object' && !Array.isArray(last) && 'cursor' in last) return { ...m, args: m.args.slice(0, -1) };
  return m;
}

function txIdsOfBlockLine(line: FixtureLine | undefined): Set<string> {
  if (!line || line.path.replace(/\/$/, '') !== '/new_block') return new Set();
  const b = JSON.parse(line.body) as { transactions?: { txid: string }[] };
  return new Set((b.transactions ?? []).map((t) => t.txid));
}

/**
 * SPEC.md "Real-time push" applied to the golden stream:
 *  1. the reference re-sends a just-mined tx to `mempool` as "pending"; stacks-pulse does not (dropped here when the
 *     tx is in the block of that line, or was already announced to the room);
 *  2. "only committed changes are pushed": a message that carries no change is dropped. In a room that holds a
 *     state (`transaction:<id>`, `address-stx-balance:<p>`) that is a payload equal to the room's last one (a state can
 *     come back: a balance A, B, A is three changes, and the publisher sends all three); in a room of items (an
 *     address's transactions, NFT events) it is an item already sent (the reference repeats the canonical txs at a
 *     height when it stores a non-canonical sibling block there);
 *  3. `invalid rooms`, `reorg` and cursors are additions, handled on our side (withoutCursor, reorg events ignored).
 */
export function pushSpecDecisions(golden: GoldenPushMessage[], lines: FixtureLine[]): ReceivedMessage[] {
  const sentPayloads = new Map<string, Set<string>>();
  const lastPayload = new Map<string, string>();
  const mempoolSeen = new Set<string>();
  const out: ReceivedMessage[] = [];
  for (const m of golden) {
    if (m.event === 'mempool') {
      const txId = (m.args[0] as { tx_id: string }).tx_id;
      if (mempoolSeen.has(txId) || txIdsOfBlockLine(lines[m.after_event_line]).has(txId)) continue;
      mempoolSeen.add(txId);
    }
    const key = JSON.stringify(stripPushVolatile(m.args));
    if (isStateRoom(m.event)) {
      if (lastPayload.get(m.event) === key) continue;
      lastPayload.set(m.event, key);
    } else {
      const seen = sentPayloads.get(m.event) ?? new Set<string>();
      if (seen.has(key)) continue;
      seen.add(key);
      sentPayloads.set(m.event, seen);
    }
    out.push({ event: m.event, args: m.args, line: m.after_event_line });
  }
  return out;
}

/** Rooms whose messages each carry a state that replaces the previous one (pushSpecDecisions rule 2). */
function isStateRoom(room: string): boolean {
  return room.startsWith('transaction:') || room.startsWith('address-stx-balance:');
}

/**
 * Our side: drops what SPEC.md adds to the reference's stream — the trailing cursor argument, `reorg` events, and, at a
 * line that caused a reorg, the new state of each affected tx and its address rooms. At such a line only the extra
 * messages go: in each room, ours must still contain the reference's messages of that line, in its order (a message
 * of ours equal to the next one the reference sent there is kept, any other is an addition). A state we send at the
 * reorg that the reference sends only later (it tells an address of its new balance when a later block touches it)
 * is kept too, in place of that later message: the next message the reference sends in that room, after that line, is
 * the same payload.
 */
export function withoutAdditions(
  ours: ReceivedMessage[],
  want: ReceivedMessage[],
  knownReorgLines: Iterable<number | undefined> = [],
): ReceivedMessage[] {
  const reorgLines = new Set([...knownReorgLines, ...ours.filter((m) => m.event === 'reorg').map((m) => m.line)]);
  const lineKey = (m: ReceivedMessage) => `${m.event}\n${m.line}`;
  const expected = new Map<string, unknown[][]>();
  for (const m of want) {
    if (!reorgLines.has(m.line)) continue;
    const list = expected.get(lineKey(m)) ?? [];
    list.push(stripPushVolatile(m.args) as unknown[]);
    expected.set(lineKey(m), list);
  }
  const laterState = (m: ReceivedMessage) =>
    want.find((w) => w.event === m.event && w.line !== undefined && m.line !== undefined && w.line > m.line);
  return ours
    .map(withoutCursor)
    .filter((m) => m.event !== 'reorg')
    .filter((m) => {
      if (!reorgLines.has(m.line) || ['block', 'microblock', 'mempool'].includes(m.event)) return true;
      const payload = stripPushVolatile(m.args);
      const next = expected.get(lineKey(m));
      if (next?.length && isDeepStrictEqual(next[0], payload)) {
        next.shift();
        return true;
      }
      if (!isStateRoom(m.event)) return false;
      const later = laterState(m);
      return later !== undefined && isDeepStrictEqual(stripPushVolatile(later.args), payload);
    });
}

/** Volatile values of push payloads: stripVolatile's, plus the block time of a microblock tx (its arrival time). */
function stripPushVolatile(v: unknown): unknown {
  const walk = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(walk);
    if (x && typeof x === 'object') {
      const o = x as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [k, val] of Object.entries(o)) {
        if ((k === 'block_time' || k === 'block_time_iso') && typeof o.microblock_hash === 'string' && o.microblock_hash !== '0x') continue;
        out[k] = walk(val);
      }
      return out;
    }
    return x;
  };
  return walk(stripVolatile(v));
}

function byRoom(msgs: ReceivedMessage[]): Map<string, unknown[][]> {
  const out = new Map<string, unknown[][]>();
  for (const m of msgs) {
    const list = out.get(m.event) ?? [];
    list.push(stripPushVolatile(m.args) as unknown[]);
    out.set(m.event, list);
  }
  return out;
}

/** Differences per room (empty when the streams match). */
export function compareStreams(ours: ReceivedMessage[], want: ReceivedMessage[], reorgLines: Iterable<number | undefined> = []): string[] {
  const a = byRoom(withoutAdditions(ours, want, reorgLines));
  const b = byRoom(want);
  const problems: string[] = [];
  for (const room of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(room) ?? [];
    const y = b.get(room) ?? [];
    if (isDeepStrictEqual(x, y)) continue;
    if (x.length !== y.length) {
      let i = 0;
      while (i < Math.min(x.length, y.length) && isDeepStrictEqual(x[i], y[i])) i++;
      const at = i < Math.min(x.length, y.length) ? firstDifference(x[i], y[i], `[${i}]`) : `[${i}] is the first extra or missing message`;
      problems.push(`${room}: ${x.length} messages, want ${y.length}; ${at}`);
    } else {
      problems.push(`${room}: ${firstDifference(x, y)}`);
    }
  }
  return problems;
}
