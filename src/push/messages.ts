/**
 * Committed change → room messages. Every payload is built from the database with the REST API's own queries and
 * serializers (v1SingleBlockJson, lookupTx, addressTxWithTransfers, stxBalance, txJson/mempoolTxJson), so a pushed
 * object is exactly what REST returns for it.
 *
 * What is sent (SPEC.md "Real-time push"):
 *  - block: every new block above height 1 (the reference treats block 1 as the genesis replay and pushes nothing
 *    for it), canonical or not, in the legacy v1 shape; a `reorg` message before it when blocks were orphaned.
 *  - microblock: each newly stored unconfirmed microblock.
 *  - mempool: each tx that entered the mempool (never re-sent when mined, unlike the reference).
 *  - transaction:<txid>: the tx in its current shape whenever that shape changed (pending, mined in a microblock,
 *    anchored, orphaned by a reorg, dropped): a payload equal to the room's previous message is not repeated.
 *  - address-transaction / address-stx-balance: for each principal involved in a tx that changed (sender, recipient,
 *    called or deployed contract, asset transfer parties; lock holders get the balance only), the tx with the
 *    principal's STX flows (canonical txs only, newest first), then the balance when it changed. For a block, only
 *    its own txs count: the blocks a reorg orphans or restores notify no principal (as in the reference).
 *  - nft-event / nft-asset-event / nft-collection-event: NFT events of txs newly anchored in a canonical block.
 *  - contract-event:<contract_id>: smart_contract_log events of txs newly mined (microblock or block) canonically.
 *  - address-mempool:<principal>: a tx involving the principal entered or left the mempool.
 *  - bns-name:<name.namespace>: `[name, /v1/names/{name} answer or null]` when a block that becomes or stops being
 *    canonical carries a BNS v1 or V2 operation on the name and its answer changed (owner, zonefile hash, status,
 *    expiry). A BNS-V2 sale (NFT transfer without a print) is not seen.
 */
import type { Sql } from '../store/sql.js';
import type { ChainUpdate } from '../chain/types.js';
import type { IngestResult } from '../store/ingest/result.js';
import { chainTip } from '../store/chain-tip.js';
import { addressTxWithTransfers, lookupTx, stxBalance, v1SingleBlockJson } from '../answers/index.js';
import * as changes from '../store/changes.js';
import type { EventDbRow, MempoolPrincipals, TxRowFull } from '../store/changes.js';
import { microblockPushJson } from '../views/explorer.js';
import { mempoolTxJson } from '../views/txs.js';
import { createHash } from 'node:crypto';
import { rooms } from './topics.js';
import { bnsNamesTouched, currentNames } from '../store/bns.js';
import { nameInfo, v2NameInfo } from '../views/bns.js';
import { bnsV2Names } from '../store/bns-v2.js';
import { ALL_ROOMS, type RoomFilter } from './interest.js';
import { chainHeartbeatMessages } from './chain-heartbeat.js';
import { lastRoomArgs, type PublishedMessage, type PushMessage } from '../store/push-log.js';

export type { PushMessage };

/** The trailing Socket.IO argument (and JSON-RPC `cursor`) of a message. */
export function cursorOf(m: PublishedMessage): Record<string, unknown> {
  return m.meta ? { cursor: m.seq, height: m.meta.height, index_block_hash: m.meta.index_block_hash } : { cursor: m.seq };
}

export interface CommittedChange {
  update: ChainUpdate;
  result: IngestResult;
}

const NO_EVENTS = { limit: 0, offset: 0 };

/** The reference's NftEvent (the nft-event rooms' payload). */
export function nftEventJson(e: EventDbRow): Record<string, unknown> {
  return {
    asset_identifier: e.asset_identifier,
    asset_event_type: e.asset_event_type,
    value: e.api.asset?.value,
    tx_id: e.tx_id,
    tx_index: e.tx_index,
    block_height: e.block_height,
    event_index: e.event_index,
    sender: e.sender,
    recipient: e.recipient,
  };
}

/**
 * The last payload seen per room, as a digest (bounded, oldest forgotten first): what decides whether a tx or a
 * balance changed. Rooms nobody follows are remembered too (their messages are built but not stored), so a change is
 * judged against the tx's previous state, not against the last state someone happened to receive.
 */
export class PayloadMemo {
  private readonly map = new Map<string, string>();
  constructor(private readonly max = 200_000) {}
  get(room: string): string | undefined {
    return this.map.get(room);
  }
  delete(room: string): void {
    this.map.delete(room);
  }
  /** Forget everything (changes went by without their payloads being computed). */
  clear(): void {
    this.map.clear();
  }
  set(room: string, args: unknown[]): void {
    this.map.delete(room);
    this.map.set(room, digest(args));
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

export function digest(args: unknown[]): string {
  return createHash('sha1').update(JSON.stringify(args)).digest('base64');
}

/**
 * Digest of the last payload per room (to publish only changes): remembered, else the last one stored — only when every
 * room's messages are stored (`stored`); otherwise push_messages may hold an older state of a room nobody followed for a
 * while, and a room that is not remembered counts as changed.
 */
export async function lastPayloads(sql: Sql, roomNames: string[], memo: PayloadMemo | undefined, stored: boolean): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const missing: string[] = [];
  for (const r of roomNames) {
    const d = memo?.get(r);
    if (d !== undefined) out.set(r, d);
    else missing.push(r);
  }
  if (!missing.length || !stored) return out;
  const rows = await lastRoomArgs(sql, missing);
  for (const r of rows) out.set(r.room, digest(r.args));
  return out;
}

function uniq<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}

/**
 * Builds every message of one committed change, in publication order. Chain data is read through `sql` (a snapshot
 * as of the commit, or the live database); what was already published is read through `log` (the live database).
 * With `early`, a block's `reorg` / `block` messages go out through it first (they are what most clients wait
 * for) and the returned list holds the rest.
 */
export async function buildMessages(
  sql: Sql,
  c: CommittedChange,
  log: Sql = sql,
  /** receives the `reorg` and `block` messages of a block as soon as they are built, before the slower rest */
  early?: (msgs: PushMessage[]) => Promise<void>,
  /**
   * rooms: what is worth building (messages for other rooms may still be returned; the caller filters); memo: the
   * last payloads (see PayloadMemo), updated with what this change sets
   */
  opts: { rooms?: RoomFilter; memo?: PayloadMemo } = {},
): Promise<PushMessage[]> {
  const { update: u, result } = c;
  const want = opts.rooms ?? ALL_ROOMS;
  const memo = opts.memo;
  // push_messages holds every room's last payload only when every room is built
  const stored = want === ALL_ROOMS;
  const out: PushMessage[] = [];
  let candidates: string[] = [];
  let balanceHeight: { height: number; burnHeight: number } | undefined;
  let anchoredBlock: string | undefined;
  let touchedOnly: string[] = [];
  /** a block stored off the canonical chain: its principals are touchedOnly's, by the reference's rule */
  let nonCanonicalBlock = false;
  /**
   * a block: the txs whose principals the address rooms hear about — its own (those the node's message carries, incl.
   * the microblock txs it confirms), not those of the blocks a reorg orphaned or restored (the reference's rule)
   */
  let addressTxIds: Set<string> | undefined;

  switch (u.kind) {
    case 'block': {
      if (u.block.block_height <= 1) return [];
      const b = await changes.storedBlock(sql, u.block.index_block_hash);
      if (!b) return [];
      if (result.orphanedBlocks.length && want.wants(rooms.block)) {
        const tip = await chainTip(sql);
        out.push({
          room: rooms.block,
          event: 'reorg',
          args: [
            {
              orphaned: result.orphanedBlocks,
              new_tip: { height: tip?.block_height ?? 0, index_block_hash: tip?.index_block_hash ?? '' },
            },
          ],
        });
      }
      if (want.wants(rooms.block)) {
        out.push({
          room: rooms.block,
          event: rooms.block,
          args: [await v1SingleBlockJson(sql, b)],
          meta: { height: b.block_height, index_block_hash: b.index_block_hash },
        });
      }
      if (early && out.length) await early(out.splice(0));
      // the burn-block and tenure rooms (src/push/chain-heartbeat.ts), right after the block
      out.push(...(await chainHeartbeatMessages(sql, b, { orphaned: result.orphanedBlocks, restored: result.restoredBlocks }, want)));
      if (early && out.length) await early(out.splice(0));
      const moved = [...result.orphanedBlocks, ...result.restoredBlocks];
      const movedTxs = await changes.txIdsOfBlocks(sql, moved);
      candidates = uniq([...u.txs.map((t) => t.tx_id), ...result.txIds, ...movedTxs]);
      if (want.wantsKind('bns-name')) out.push(...(await bnsNameMessages(sql, log, [b.index_block_hash, ...moved], want, memo, stored)));
      balanceHeight = { height: b.block_height, burnHeight: b.burn_block_height };
      addressTxIds = new Set(u.txs.map((t) => t.tx_id));
      if (b.canonical) anchoredBlock = b.index_block_hash;
      // The reference notifies the principals of every stored block, canonical or not: a non-canonical block's
      // principals get their balance at its height (its txs are no canonical address-transaction), the lock state
      // judged at the burn height of the canonical block at that height (none: no balance, as the reference fails).
      // A principal someone follows in address-transaction gets nothing when it has no canonical tx at that height:
      // the reference reads its txs at that height first and stops there when there are none.
      else {
        const burnHeight = await changes.canonicalBurnHeightAt(sql, b.block_height);
        if (burnHeight !== undefined) {
          const touched = touchedPrincipals(u);
          const followed = touched.filter((p) => want.wants(rooms.addressTransaction(p)));
          const withTxs = await changes.principalsWithCanonicalTxsAt(sql, followed, b.block_height);
          touchedOnly = touched.filter((p) => !followed.includes(p) || withTxs.has(p));
          balanceHeight = { height: b.block_height, burnHeight };
        }
        nonCanonicalBlock = true;
      }
      break;
    }
    case 'microblocks': {
      const hashes = u.microblocks.map((m) => m.microblock_hash);
      const mbs = await changes.unconfirmedMicroblocks(sql, hashes);
      if (!mbs.length && !result.txIds.length) return [];
      const parent = await changes.blockHead(sql, u.parentIndexBlockHash);
      const txRows = await changes.unconfirmedMicroblockTxIds(sql, hashes);
      for (const m of want.wants(rooms.microblock) ? mbs : []) {
        const txs = txRows.filter((t) => t.microblock_hash === m.microblock_hash).map((t) => t.tx_id);
        out.push({
          room: rooms.microblock,
          event: rooms.microblock,
          args: [microblockPushJson({ ...m, parent_block_height: m.block_height - 1, parent_block_hash: parent?.block_hash ?? '' }, txs)],
        });
      }
      candidates = uniq([...txRows.map((t) => t.tx_id), ...result.txIds, ...result.unconfirmedOrphans]);
      if (parent) balanceHeight = { height: parent.block_height + 1, burnHeight: parent.burn_block_height };
      break;
    }
    case 'mempool':
    case 'drop_mempool':
      candidates = uniq(result.txIds);
      break;
    default:
      return [];
  }
  if (!candidates.length) return out;
  if (!TX_ROOM_KINDS.some((k) => want.wantsKind(k))) {
    // these txs' shapes go by uncomputed: what the memo holds may be outdated
    memo?.clear();
    return out;
  }

  // Current shape of every candidate tx; only those whose room would see something new count as changed.
  const shapes = new Map<string, Record<string, unknown>>();
  // concurrent lookups: their statements are pipelined on the connection (same snapshot, same results, fewer round trips)
  const looked = await Promise.all(
    candidates.map((id) =>
      lookupTx(sql, id, { max: Number.MAX_SAFE_INTEGER, events: NO_EVENTS, excludeFunctionArgs: false, includeNonCanonical: true }),
    ),
  );
  candidates.forEach((id, i) => {
    const tx = looked[i];
    if (tx) shapes.set(id, tx);
  });
  const last = await lastPayloads(log, [...shapes.keys()].map(rooms.transaction), memo, stored);
  const changed = [...shapes.keys()].filter((id) => last.get(rooms.transaction(id)) !== digest([shapes.get(id)]));
  for (const id of changed) memo?.set(rooms.transaction(id), [shapes.get(id)]);
  // mempool messages: the reference announces each tx it sees for the first time to the mempool room, in its mempool
  // shape, even when it is at once replaced or found mined (pruned)
  const newPool = u.kind === 'mempool' ? result.newMempoolTxs : undefined;
  if (!changed.length && !touchedOnly.length && !newPool?.length) return out;

  // Mempool entries and exits.
  // and mined placements (canonical) of the changed txs: one round trip
  const [mempoolRows, mined] = await Promise.all([
    changes.mempoolRowsWithParties(sql, uniq([...changed, ...(newPool ?? [])])),
    changes.canonicalMinedTxs(sql, changed),
  ]);
  const mempoolById = new Map(mempoolRows.map((r) => [r.tx_id, r]));
  const minedById = new Map(mined.map((r) => [r.tx_id, r]));
  const events = await changes.canonicalEventsOfTxs(sql, mined.map((m) => m.tx_id));

  for (const id of changed) {
    const tx = shapes.get(id)!;
    const row = mempoolById.get(id);
    if (u.kind === 'mempool' && row && (newPool ? newPool.includes(id) : !row.pruned)) {
      out.push({ room: rooms.mempool, event: rooms.mempool, args: [mempoolTxJson(row)] });
    }
    out.push({ room: rooms.transaction(id), event: rooms.transaction(id), args: [tx] });
  }
  for (const id of newPool ?? []) {
    const row = mempoolById.get(id);
    if (row && !changed.includes(id)) out.push({ room: rooms.mempool, event: rooms.mempool, args: [mempoolTxJson(row)] });
  }

  // address-mempool: entered (pending) or left (mined, dropped, replaced) the mempool.
  for (const id of changed) {
    const row = mempoolById.get(id);
    if (!row) continue;
    const m = minedById.get(id);
    const status = row.pruned && m && row.status === 'pending' ? m.status : row.status;
    const payload = mempoolTxJson(row, { status });
    for (const p of mempoolPrincipals(row)) out.push({ room: rooms.addressMempool(p), event: rooms.addressMempool(p), args: [p, payload] });
  }

  // Principals of each changed tx (reference order), and which of them see the tx in address-transaction.
  const balanceOnly = new Set<string>();
  const principalsOrder: string[] = [];
  const txsOf = new Map<string, TxRowFull[]>();
  const note = (p: string | null | undefined, tx: TxRowFull | undefined, lockOnly = false) => {
    if (!p) return;
    if (!principalsOrder.includes(p)) principalsOrder.push(p);
    if (tx && !lockOnly) {
      const list = txsOf.get(p) ?? [];
      if (!list.includes(tx)) list.push(tx);
      txsOf.set(p, list);
    } else if (lockOnly && !txsOf.has(p)) balanceOnly.add(p);
  };
  for (const id of changed) {
    const m = minedById.get(id);
    if (!m || (addressTxIds && !addressTxIds.has(id))) continue;
    note(m.sender_address, m);
    for (const e of events.filter((x) => x.tx_id === id)) {
      if (e.event_type === 'stx_lock') note(e.locked_address, m, true);
      if (e.event_type === 'stx_asset' || e.event_type === 'fungible_token_asset' || e.event_type === 'non_fungible_token_asset') {
        note(e.sender, m);
        note(e.recipient, m);
      }
    }
    note(m.smart_contract_contract_id, m);
    note(m.contract_call_contract_id, m);
    note(m.token_transfer_recipient, m);
  }
  // Orphaned txs (no canonical placement) still change their parties' balances; a block's address messages are its
  // own txs' only (above).
  const orphanParties = nonCanonicalBlock || addressTxIds ? [] : changed.filter((id) => !minedById.has(id) && shapes.get(id)?.canonical === false);
  for (const id of orphanParties) {
    const s = shapes.get(id)!;
    note(s.sender_address as string, undefined);
  }

  for (const p of touchedOnly) note(p, undefined);
  // the per-principal reads (balance, STX flows) only for principals someone follows
  const principals: string[] = [];
  for (const p of principalsOrder) {
    if (want.wants(rooms.addressTransaction(p)) || want.wants(rooms.addressStxBalance(p))) principals.push(p);
    // a balance not computed now may change unseen: its remembered value no longer says what a subscriber last got
    else memo?.delete(rooms.addressStxBalance(p));
  }
  if (balanceHeight && principals.length) {
    const bh = balanceHeight;
    // every read at once (pipelined), then the messages in the reference's order
    const sortedTxs = principals.map((p) =>
      // the reference's order: height, then tx index, descending; ties (a microblock tx and an anchored one with the
      // same index) keep its query order, microblock sequence descending
      (txsOf.get(p) ?? [])
        .slice()
        .sort((a, b) => b.block_height - a.block_height || b.tx_index - a.tx_index || b.microblock_sequence - a.microblock_sequence),
    );
    const [balanceList, lastBalance, fulls] = await Promise.all([
      Promise.all(principals.map((p) => stxBalance(sql, p, bh.height, bh.burnHeight, false))),
      lastPayloads(log, principals.map(rooms.addressStxBalance), memo, stored),
      Promise.all(principals.map((p, i) => Promise.all(sortedTxs[i].map((t) => addressTxWithTransfers(sql, p, t))))),
    ]);
    const balances = new Map<string, unknown>(principals.map((p, i) => [p, balanceList[i]]));
    for (const [pi, p] of principals.entries()) {
      const txs = sortedTxs[pi];
      for (const [ti] of txs.entries()) {
        const full = fulls[pi][ti];
        const room = rooms.addressTransaction(p);
        out.push({
          room,
          event: room,
          args: [
            p,
            {
              tx: full.tx,
              stx_sent: full.stx_sent,
              stx_received: full.stx_received,
              // the reference's push payload keeps a missing party as null (its REST answer prints "")
              stx_transfers: full.stx_transfers.map((x) => ({ ...x, sender: x.sender || null, recipient: x.recipient || null })),
            },
          ],
        });
      }
      const room = rooms.addressStxBalance(p);
      const args = [p, balances.get(p)];
      if (lastBalance.get(room) !== digest(args)) {
        out.push({ room, event: room, args });
        memo?.set(room, args);
      }
    }
  }

  // NFT events of txs newly anchored in a canonical block; contract logs of every newly mined canonical tx.
  for (const e of events) {
    if (!changed.includes(e.tx_id)) continue;
    const m = minedById.get(e.tx_id)!;
    if (e.event_type === 'non_fungible_token_asset' && anchoredBlock && m.index_block_hash === anchoredBlock && e.asset_identifier) {
      const ev = nftEventJson(e);
      const value = e.value_hex ?? '';
      out.push({ room: rooms.nftEvent, event: rooms.nftEvent, args: [ev] });
      const a = rooms.nftAssetEvent(e.asset_identifier, value);
      out.push({ room: a, event: a, args: [e.asset_identifier, value, ev] });
      const col = rooms.nftCollectionEvent(e.asset_identifier);
      out.push({ room: col, event: col, args: [e.asset_identifier, ev] });
    }
    if (e.event_type === 'smart_contract_log' && e.contract_id) {
      const room = rooms.contractEvent(e.contract_id);
      out.push({ room, event: room, args: [e.contract_id, e.api] });
    }
  }
  return out;
}

/** The bns-name messages of the names operated on in these blocks whose answer changed. */
async function bnsNameMessages(
  sql: Sql,
  log: Sql,
  blocks: string[],
  want: RoomFilter,
  memo: PayloadMemo | undefined,
  stored: boolean,
): Promise<PushMessage[]> {
  const names = (await bnsNamesTouched(sql, blocks)).filter((n) => want.wants(rooms.bnsName(n)));
  if (!names.length) return [];
  // the v1 answer of /v1/names/{name}, which falls back to a BNS-V2 name
  const current = new Map<string, Record<string, unknown>>((await bnsV2Names(sql, names)).map((r) => [r.name, v2NameInfo(r)]));
  for (const r of await currentNames(sql, names)) current.set(r.name, nameInfo(r));
  const last = await lastPayloads(log, names.map(rooms.bnsName), memo, stored);
  const out: PushMessage[] = [];
  for (const n of names) {
    const room = rooms.bnsName(n);
    const args = [n, current.get(n) ?? null];
    if (last.get(room) === digest(args)) continue;
    out.push({ room, event: room, args });
    memo?.set(room, args);
  }
  return out;
}

/** Room kinds whose messages come from the txs of a change (everything but block and microblock). */
const TX_ROOM_KINDS = [
  'mempool',
  'transaction',
  'address-mempool',
  'address-transaction',
  'address-stx-balance',
  'nft-event',
  'nft-asset-event',
  'nft-collection-event',
  'contract-event',
];

function mempoolPrincipals(r: MempoolPrincipals): string[] {
  return uniq(
    [r.sender_address, r.sponsor_address, r.token_transfer_recipient, r.contract_call_contract_id, r.smart_contract_contract_id].filter(
      (x): x is string => !!x,
    ),
  );
}

/**
 * The principals the reference's emitAddressTxUpdates considers touched by a block's txs, in its order: the sender,
 * STX lock holders, STX / FT / NFT transfer parties, the deployed contract, the called contract, the token transfer
 * recipient.
 */
function touchedPrincipals(u: Extract<ChainUpdate, { kind: 'block' }>): string[] {
  const out: string[] = [];
  const add = (p: string | null | undefined) => {
    if (p && !out.includes(p)) out.push(p);
  };
  for (const t of u.txs) {
    add(t.sender_address);
    const evs = u.events.filter((e) => e.tx_id === t.tx_id);
    for (const e of evs) if (e.event_type === 'stx_lock') add(e.locked_address);
    for (const type of ['stx_asset', 'fungible_token_asset', 'non_fungible_token_asset']) {
      for (const e of evs) {
        if (e.event_type !== type) continue;
        add(e.sender);
        add(e.recipient);
      }
    }
    add(t.smart_contract_contract_id);
    add(t.contract_call_contract_id);
    add(t.token_transfer_recipient);
  }
  return out;
}
