/**
 * The reads push makes to turn one committed change into room messages (src/push/messages.ts, token-rooms.ts): the
 * block and microblocks it stored, the txs it moved, the mempool and mined rows and events of the txs whose shape
 * changed. Rows only; the payloads are built with the same serializers and views as REST (src/api).
 */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import type { BlockDbRow } from './block-columns.js';
import type { MempoolDbRow, TxDbRow } from './txs.js';
import type { MicroblockDbRow } from './microblocks.js';

export type TxRowFull = TxDbRow & {
  sender_address: string;
  fee_rate: string;
  token_transfer_recipient: string | null;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
};

export interface EventDbRow {
  tx_id: string;
  event_index: number;
  tx_index: number;
  block_height: number;
  event_type: string;
  asset_event_type: string | null;
  sender: string | null;
  recipient: string | null;
  asset_identifier: string | null;
  value_hex: string | null;
  contract_id: string | null;
  locked_address: string | null;
  api: { asset?: { value?: unknown } } & Record<string, unknown>;
}

export interface TokenEventRow extends EventDbRow {
  index_block_hash: string;
}

export interface MempoolPrincipals {
  sender_address: string;
  sponsor_address: string | null;
  token_transfer_recipient: string | null;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
}

export async function storedBlock(sql: Sql, indexBlockHash: string): Promise<BlockDbRow | undefined> {
  const [b] = await sql<BlockDbRow[]>`SELECT * FROM blocks WHERE index_block_hash = ${indexBlockHash}`;
  return b;
}

/** Ids of every tx placed in these blocks (any state). */
export async function txIdsOfBlocks(sql: Sql, blocks: string[]): Promise<string[]> {
  if (!blocks.length) return [];
  const rows = await sql<{ tx_id: string }[]>`SELECT DISTINCT tx_id FROM txs WHERE index_block_hash = ANY(${blocks})`;
  return rows.map((r) => r.tx_id);
}

/** Burn height of the canonical block at `height`, or at the tip when `height` is above it. */
export async function canonicalBurnHeightAt(sql: Sql, height: number): Promise<number | undefined> {
  const [c] = await sql<{ burn_block_height: number }[]>`
    SELECT burn_block_height FROM blocks WHERE canonical AND block_height = LEAST(${height},
      (SELECT max(block_height) FROM blocks WHERE canonical))`;
  return c?.burn_block_height;
}

/** A microblock row without its parent block's height and hash (the caller knows the parent). */
export type UnplacedMicroblockRow = Omit<MicroblockDbRow, 'parent_block_height' | 'parent_block_hash'>;

/** The unconfirmed microblocks among these hashes, sequence ascending. */
export async function unconfirmedMicroblocks(sql: Sql, hashes: string[]): Promise<UnplacedMicroblockRow[]> {
  return sql<UnplacedMicroblockRow[]>`
    SELECT microblock_hash, microblock_sequence, microblock_parent_hash, block_height, block_hash,
      parent_burn_block_height, parent_burn_block_hash, parent_burn_block_time, canonical, microblock_canonical
    FROM microblocks WHERE microblock_hash = ANY(${hashes}) AND index_block_hash = ''
    ORDER BY microblock_sequence ASC`;
}

export async function blockHead(
  sql: Sql,
  indexBlockHash: string,
): Promise<{ block_hash: string; block_height: number; burn_block_height: number; canonical: boolean } | undefined> {
  const [b] = await sql<{ block_hash: string; block_height: number; burn_block_height: number; canonical: boolean }[]>`
    SELECT block_hash, block_height, burn_block_height, canonical FROM blocks WHERE index_block_hash = ${indexBlockHash}`;
  return b;
}

/** Ids of the unconfirmed txs of these microblocks, tx index descending. */
export async function unconfirmedMicroblockTxIds(sql: Sql, hashes: string[]): Promise<{ microblock_hash: string; tx_id: string }[]> {
  return sql<{ microblock_hash: string; tx_id: string }[]>`
    SELECT microblock_hash, tx_id FROM txs WHERE microblock_hash = ANY(${hashes}) AND index_block_hash = ''
    ORDER BY tx_index DESC`;
}

/** Mempool rows (any state) of these ids, with their parties and the called contract's ABI. */
export async function mempoolRowsWithParties(sql: Sql, txIds: string[]): Promise<(MempoolDbRow & MempoolPrincipals & { pruned: boolean })[]> {
  return sql<(MempoolDbRow & MempoolPrincipals & { pruned: boolean })[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ANY(${txIds})`;
}

/** Canonical mined placements of these ids. */
export async function canonicalMinedTxs(sql: Sql, txIds: string[]): Promise<TxRowFull[]> {
  return sql<TxRowFull[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ANY(${txIds}) AND x.canonical AND x.microblock_canonical`;
}

/**
 * Which of these principals have a canonical tx at stacks height `height` by the reference's rule for an address's
 * transactions: sender (not sponsor), token-transfer recipient, called or deployed contract, or a party of one of the
 * tx's STX / FT / NFT events (any placement's events, as the reference joins them by tx id).
 */
export async function principalsWithCanonicalTxsAt(sql: Sql, principals: string[], height: number): Promise<Set<string>> {
  if (!principals.length) return new Set();
  const rows = await sql<{ principal: string }[]>`
    SELECT p.principal FROM unnest(${principals}::text[]) AS p(principal)
    WHERE EXISTS (
      SELECT 1 FROM txs x
      WHERE x.block_height = ${height} AND x.canonical AND x.microblock_canonical
        AND (x.sender_address = p.principal OR x.token_transfer_recipient = p.principal
          OR x.contract_call_contract_id = p.principal OR x.smart_contract_contract_id = p.principal
          OR EXISTS (
            SELECT 1 FROM events e
            WHERE e.tx_id = x.tx_id AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
              AND (e.sender = p.principal OR e.recipient = p.principal))))`;
  return new Set(rows.map((r) => r.principal));
}

/** Events of the canonical placements of these txs, in chain order. */
export async function canonicalEventsOfTxs(sql: Sql, txIds: string[]): Promise<EventDbRow[]> {
  if (!txIds.length) return [];
  return sql<EventDbRow[]>`
    SELECT e.tx_id, e.event_index, e.tx_index, e.block_height, e.event_type, e.asset_event_type, e.sender,
      e.recipient, e.asset_identifier, e.value_hex, e.contract_id, e.locked_address, e.api
    FROM events e JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash
      AND t.microblock_hash = e.microblock_hash
    WHERE t.tx_id = ANY(${txIds}) AND t.canonical AND t.microblock_canonical
    ORDER BY t.block_height, t.microblock_sequence, t.tx_index, e.event_index`;
}

const TOKEN_EVENT_COLUMNS = `e.tx_id, e.event_index, e.tx_index, e.block_height, e.event_type, e.asset_event_type, e.sender,
  e.recipient, e.asset_identifier, e.value_hex, e.contract_id, e.locked_address, e.index_block_hash, e.api`;

/** FT and NFT events of these blocks, in chain order. */
export async function tokenEventsOfBlocks(sql: Sql, blocks: string[]): Promise<TokenEventRow[]> {
  return sql<TokenEventRow[]>`
    SELECT ${sql.unsafe(TOKEN_EVENT_COLUMNS)} FROM events e
    WHERE e.index_block_hash = ANY(${blocks}) AND e.event_type IN ('fungible_token_asset', 'non_fungible_token_asset')
    ORDER BY e.block_height, e.tx_index, e.event_index`;
}

/** Unconfirmed FT events of these microblocks or of these txs (orphaned from the stream). */
export async function unconfirmedFtEvents(sql: Sql, microblocks: string[], txIds: string[]): Promise<TokenEventRow[]> {
  return sql<TokenEventRow[]>`
    SELECT ${sql.unsafe(TOKEN_EVENT_COLUMNS)} FROM events e
    WHERE e.index_block_hash = '' AND e.event_type = 'fungible_token_asset'
      AND (e.microblock_hash = ANY(${microblocks}) OR e.tx_id = ANY(${txIds}))`;
}
