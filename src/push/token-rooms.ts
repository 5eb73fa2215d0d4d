/**
 * Token push rooms, built next to messages.ts from the same committed change:
 *
 *  - address-ft-balance:<principal>: the principal's FT balances (`{fungible_tokens}`, the `fungible_tokens` member of
 *    `/extended/v1/address/{principal}/balances` at the change's height: a block's, or the microblock stream's on top
 *    of its parent) whenever they changed; sent for every party of an FT event in the block (or the blocks a reorg
 *    moved) or in the microblocks of the change; a payload equal to the room's previous one is not repeated.
 *  - address-nft-event:<principal>: each NFT event of a newly anchored canonical block where the principal is the
 *    sender or the recipient (the payload of the `nft-event` room), and of the blocks a reorg made canonical again.
 *
 * `memo` must be this module's own PayloadMemo (messages.ts clears its memo when it skips tx rooms).
 *
 * JSON-RPC: `address_ft_balance_update` / `address_nft_event` with `params.address` (src/push/jsonrpc.ts).
 */
import type { Sql } from '../store/sql.js';
import { ftTotalsAt } from '../store/balances.js';
import { ftBalancesJson } from '../views/tokens.js';
import { digest, lastPayloads, nftEventJson, type CommittedChange, type PayloadMemo, type PushMessage } from './messages.js';
import { ALL_ROOMS, type RoomFilter } from './interest.js';
import { rooms } from './topics.js';
import * as changes from '../store/changes.js';
import type { TokenEventRow } from '../store/changes.js';


/** The messages of the token rooms for one committed change (empty when nobody follows such a room). */
export async function buildTokenMessages(
  sql: Sql,
  c: CommittedChange,
  log: Sql = sql,
  opts: { rooms?: RoomFilter; memo?: PayloadMemo } = {},
): Promise<PushMessage[]> {
  const want = opts.rooms ?? ALL_ROOMS;
  const ft = want.wantsKind('address-ft-balance');
  const nft = want.wantsKind('address-nft-event');
  if (!ft && !nft) return [];
  const { update: u, result } = c;
  let events: TokenEventRow[];
  let height: number;
  /** blocks that just became canonical: the new block and the branch a reorg restored */
  let anchored = new Set<string>();
  if (u.kind === 'block') {
    if (u.block.block_height <= 1) return [];
    const b = await changes.blockHead(sql, u.block.index_block_hash);
    if (!b) return [];
    if (b.canonical) anchored = new Set([u.block.index_block_hash, ...result.restoredBlocks]);
    height = b.block_height;
    const blocks = [u.block.index_block_hash, ...result.orphanedBlocks, ...result.restoredBlocks];
    events = await changes.tokenEventsOfBlocks(sql, blocks);
  } else if (u.kind === 'microblocks') {
    const parent = await changes.blockHead(sql, u.parentIndexBlockHash);
    if (!parent) return [];
    height = parent.block_height + 1;
    const hashes = u.microblocks.map((m) => m.microblock_hash);
    events = await changes.unconfirmedFtEvents(sql, hashes, result.unconfirmedOrphans);
  } else {
    return [];
  }
  if (!events.length) return [];
  const out: PushMessage[] = [];

  if (ft) {
    const parties = new Set<string>();
    for (const e of events) {
      if (e.event_type !== 'fungible_token_asset') continue;
      for (const p of [e.sender, e.recipient]) {
        if (!p) continue;
        if (want.wants(rooms.addressFtBalance(p))) parties.add(p);
        // not computed now, so it may change unseen: the remembered payload no longer says what a subscriber last got
        else opts.memo?.delete(rooms.addressFtBalance(p));
      }
    }
    const principals = [...parties];
    const balances = await Promise.all(principals.map((p) => ftTotalsAt(sql, p, height)));
    const last = await lastPayloads(log, principals.map(rooms.addressFtBalance), opts.memo, want === ALL_ROOMS);
    principals.forEach((p, i) => {
      const room = rooms.addressFtBalance(p);
      const args = [p, { fungible_tokens: ftBalancesJson(balances[i]) }];
      if (last.get(room) === digest(args)) return;
      out.push({ room, event: room, args });
      opts.memo?.set(room, args);
    });
  }

  if (nft && anchored.size) {
    for (const e of events) {
      if (e.event_type !== 'non_fungible_token_asset' || !anchored.has(e.index_block_hash) || !e.asset_identifier) continue;
      const ev = nftEventJson(e);
      for (const p of new Set([e.sender, e.recipient])) {
        if (!p) continue;
        const room = rooms.addressNftEvent(p);
        out.push({ room, event: room, args: [p, ev] });
      }
    }
  }
  return out;
}
