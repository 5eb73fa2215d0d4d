/**
 * Reads of the Rosetta endpoints (src/api/routes/rosetta/): blocks by Rosetta identifier (block hash — not the index
 * block hash — or height), a block's txs with their events, the miner rewards that matured at a height, the STX that
 * unlocked at a block, mempool txs, and an account's nonce as of a block. Rows only; src/chain/rosetta-ops.ts builds
 * the operations.
 */
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import type { TxStaticJson } from '../chain/tx.js';
import type { OpsEvent, OpsMinerReward, OpsUnlock } from '../chain/rosetta-ops.js';

export interface RosettaBlockRow {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  parent_block_hash: string;
  signer_bitvec: string | null;
}

const BLOCK_COLUMNS = `index_block_hash, block_hash, block_height, block_time, burn_block_time, burn_block_height,
  parent_block_hash, signer_bitvec`;

export async function rosettaTip(sql: Sql): Promise<RosettaBlockRow | undefined> {
  const [b] = await sql<RosettaBlockRow[]>`
    SELECT ${sql.unsafe(BLOCK_COLUMNS)} FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
  return b;
}

/**
 * A block by its hash or height as the reference's Rosetta routes find it (its getBlock): any stored block, the
 * canonical one first, then the highest. So a non-canonical block (an orphaned fork block, the boot block at height 0
 * whose txs block 1 adopted) is answered by hash, with no transactions (rosettaBlockTxs reads canonical txs only).
 */
export async function rosettaBlockByHash(sql: Sql, hash: string): Promise<RosettaBlockRow | undefined> {
  const [b] = await sql<RosettaBlockRow[]>`
    SELECT ${sql.unsafe(BLOCK_COLUMNS)} FROM blocks WHERE block_hash = ${hash}
    ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  return b;
}

export async function rosettaBlockAtHeight(sql: Sql, height: number): Promise<RosettaBlockRow | undefined> {
  if (!Number.isSafeInteger(height)) return undefined;
  const [b] = await sql<RosettaBlockRow[]>`
    SELECT ${sql.unsafe(BLOCK_COLUMNS)} FROM blocks WHERE block_height = ${height}
    ORDER BY canonical DESC LIMIT 1`;
  return b;
}

/** A mined tx row as the operations need it. */
export interface RosettaTxRow {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  block_hash: string;
  block_height: number;
  status: string;
  raw_result: string;
  api: TxStaticJson;
  abi: unknown;
}

const TX_COLUMNS = `x.tx_id, x.index_block_hash, x.microblock_hash, x.block_hash, x.block_height, x.status, x.raw_result, x.api`;

/** The canonical txs of a block (microblock txs it confirmed first), in the reference's order. */
export async function rosettaBlockTxs(sql: Sql, indexBlockHash: string): Promise<RosettaTxRow[]> {
  return sql<RosettaTxRow[]>`
    SELECT ${sql.unsafe(TX_COLUMNS)}, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.index_block_hash = ${indexBlockHash} AND x.canonical AND x.microblock_canonical
    ORDER BY x.microblock_sequence ASC, x.tx_index ASC`;
}

/**
 * A mined tx by id as /block/transaction finds it (the reference's getTx without the unconfirmed stream): any
 * placement up to the canonical tip's height, canonical first, so a tx mined only in an orphaned block is found too
 * (with the operations of its own placement).
 */
export async function rosettaMinedTx(sql: Sql, txId: string): Promise<RosettaTxRow | undefined> {
  const [row] = await sql<RosettaTxRow[]>`
    SELECT ${sql.unsafe(TX_COLUMNS)}, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ${txId} AND x.index_block_hash <> ''
      AND x.block_height <= (SELECT COALESCE(max(block_height), 0) FROM blocks WHERE canonical)
    ORDER BY x.canonical DESC, x.microblock_canonical DESC, x.block_height DESC LIMIT 1`;
  return row;
}

type EventRow = OpsEvent & { tx_id: string };

/** The events of these txs of a block, per tx, in event order. */
export async function rosettaEvents(sql: Sql, indexBlockHash: string, txIds: string[]): Promise<Map<string, OpsEvent[]>> {
  const out = new Map<string, OpsEvent[]>();
  if (!txIds.length) return out;
  const rows = await sql<EventRow[]>`
    SELECT tx_id, event_type, asset_event_type, sender, recipient, amount::text AS amount, api->'asset'->>'memo' AS memo,
      locked_address, unlock_height, asset_identifier
    FROM events
    WHERE index_block_hash = ${indexBlockHash} AND tx_id = ANY(${txIds}) AND microblock_canonical
      AND event_type IN ('stx_asset', 'stx_lock', 'fungible_token_asset')
    ORDER BY tx_id, event_index`;
  for (const r of rows) {
    const { tx_id, ...e } = r;
    let list = out.get(tx_id);
    if (!list) out.set(tx_id, (list = []));
    list.push({ ...e, unlock_height: e.unlock_height === null ? null : Number(e.unlock_height) });
  }
  return out;
}

/** Miner rewards that matured in the canonical block at `height` (newest stored first, as the reference lists them). */
export async function rosettaMinerRewards(sql: Sql, height: number): Promise<OpsMinerReward[]> {
  return sql<OpsMinerReward[]>`
    SELECT recipient, coinbase_amount::text AS coinbase_amount, tx_fees_anchored::text AS tx_fees_anchored,
      tx_fees_streamed_confirmed::text AS tx_fees_streamed_confirmed, tx_fees_streamed_produced::text AS tx_fees_streamed_produced
    FROM miner_rewards WHERE canonical AND block_height = ${height}
    ORDER BY ctid DESC`;
}

/**
 * STX that unlocked at this block: locks whose burnchain unlock height falls in (previous block's burn height, this
 * block's burn height]. Sources: stx_lock events of the v1 `pox` contract (until pox_v1_unlock_height) and the
 * pox-2/3/4 lock events (sql/0008_pox.sql), the newest lock per stacker.
 */
export async function rosettaUnlocks(sql: Sql, block: RosettaBlockRow): Promise<OpsUnlock[]> {
  const cur = block.burn_block_height;
  let prev = cur;
  if (block.block_height > 1) {
    const [p] = await sql<{ burn_block_height: number }[]>`
      SELECT burn_block_height FROM blocks WHERE canonical AND block_height = ${block.block_height - 1} LIMIT 1`;
    if (p) prev = Number(p.burn_block_height);
  }
  if (prev >= cur) return [];
  const [state] = await sql<{ pox_v1_unlock_height: number | null }[]>`SELECT pox_v1_unlock_height FROM chain_state WHERE id = 1`;
  const v1 = state?.pox_v1_unlock_height == null ? null : Number(state.pox_v1_unlock_height);
  const rows: OpsUnlock[] = [];
  if (v1 === null || v1 > cur) {
    rows.push(
      ...(await sql<OpsUnlock[]>`
        SELECT DISTINCT ON (e.locked_address) e.tx_id, e.locked_address AS stacker_address, e.amount::text AS unlocked_amount
        FROM events e
        WHERE e.event_type = 'stx_lock' AND e.canonical AND e.microblock_canonical AND e.contract_id LIKE '%.pox'
          AND e.unlock_height <= ${cur} AND e.unlock_height > ${prev}
        ORDER BY e.locked_address, e.block_height DESC, e.tx_index DESC, e.event_index DESC`),
    );
  }
  // the newest lock event of each stacker as of this block (a stack-extend / stack-increase supersedes the earlier
  // one), when its unlock height falls in the window
  rows.push(
    ...(await sql<OpsUnlock[]>`
      SELECT tx_id, stacker_address, unlocked_amount FROM (
        SELECT DISTINCT ON (p.stacker) e.tx_id, p.stacker AS stacker_address, p.locked::text AS unlocked_amount,
          p.burnchain_unlock_height
        FROM pox_events p
        JOIN events e ON md5(e.value_hex) = p.value_md5
          AND e.event_type = 'smart_contract_log' AND e.topic = 'print' AND e.contract_id IN (
            'SP000000000000000000002Q6VF78.pox-2', 'ST000000000000000000002AMW42H.pox-2',
            'SP000000000000000000002Q6VF78.pox-3', 'ST000000000000000000002AMW42H.pox-3',
            'SP000000000000000000002Q6VF78.pox-4', 'ST000000000000000000002AMW42H.pox-4')
        WHERE e.canonical AND e.microblock_canonical AND e.block_height <= ${block.block_height}
          AND p.name IN ('stack-stx', 'stack-increase', 'stack-extend', 'delegate-stack-stx', 'delegate-stack-increase', 'delegate-stack-extend')
        ORDER BY p.stacker, e.block_height DESC, e.tx_index DESC, e.event_index DESC
      ) newest
      WHERE burnchain_unlock_height <= ${cur} AND burnchain_unlock_height > ${prev}`),
  );
  return rows;
}

/**
 * What the reference's Rosetta mempool holds (its anchored view): pending txs, and txs mined only in the unconfirmed
 * microblock stream (pruned from the mempool, not in an anchor block yet).
 */
const ROSETTA_PENDING = `x.tx_id IN (
  SELECT p.tx_id FROM mempool_pending p
  UNION ALL
  SELECT t.tx_id FROM txs t WHERE t.index_block_hash = '' AND t.canonical AND t.microblock_canonical)`;

/** The pending mempool tx ids, newest first. */
export async function rosettaMempoolIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ tx_id: string }[]>`
    SELECT x.tx_id FROM mempool_txs x WHERE ${sql.unsafe(ROSETTA_PENDING)} ORDER BY x.receipt_time DESC, x.tx_id`;
  return rows.map((r) => r.tx_id);
}

export interface RosettaMempoolRow {
  tx_id: string;
  api: TxStaticJson;
  abi: unknown;
}

export async function rosettaMempoolTx(sql: Sql, txId: string): Promise<RosettaMempoolRow | undefined> {
  const [row] = await sql<RosettaMempoolRow[]>`
    SELECT x.tx_id, x.api, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ${txId} AND ${sql.unsafe(ROSETTA_PENDING)}`;
  return row;
}

/**
 * A tx as the reference's getTx finds it (what its contract-call operations are built from): any stored placement up
 * to the anchored tip's height (so not one in the unconfirmed microblock stream above it), canonical first, then the
 * highest.
 */
export async function rosettaStoredTx(sql: Sql, txId: string): Promise<RosettaTxRow | undefined> {
  const [row] = await sql<RosettaTxRow[]>`
    SELECT ${sql.unsafe(TX_COLUMNS)}, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ${txId}
      AND x.block_height <= (SELECT COALESCE(MAX(block_height), 0) FROM blocks WHERE canonical)
    ORDER BY x.canonical DESC, x.microblock_canonical DESC, x.block_height DESC
    LIMIT 1`;
  return row;
}

/**
 * An account's STX balance (total, locked included) and highest executed nonce as of a height: its newest canonical
 * checkpoint at or below it (sql/0090_balance_checkpoints.sql), one index lookup however long its history.
 */
export async function rosettaStxAt(sql: Sql, principal: string, height: number): Promise<{ balance: string; nonce: number | null }> {
  const [r] = await sql<{ balance: string; nonce: string | null }[]>`
    SELECT balance::text AS balance, nonce::text AS nonce FROM balance_checkpoints
    WHERE principal = ${principal} AND asset_identifier = 'stx' AND canonical AND block_height <= ${height}
    ORDER BY block_height DESC LIMIT 1`;
  return r ? { balance: r.balance, nonce: r.nonce === null ? null : Number(r.nonce) } : { balance: '0', nonce: null };
}

/** Every fungible token an account ever moved on the canonical anchored chain (ft_balances' primary key, no history). */
export async function rosettaFtAssetsOf(sql: Sql, principal: string): Promise<string[]> {
  const rows = await sql<{ asset_identifier: string }[]>`
    SELECT asset_identifier FROM ft_balances WHERE principal = ${principal}`;
  return rows.map((r) => r.asset_identifier);
}

/**
 * An account's balance of the given fungible tokens (those it moved up to a height: 0 included) as of that height, each
 * from its newest canonical checkpoint at or below the height (one index lookup per token). A token it had not moved
 * by then has no row.
 */
export async function rosettaFtBalancesAt(
  sql: Sql,
  principal: string,
  height: number,
  assets: string[],
): Promise<{ asset_identifier: string; balance: string }[]> {
  if (!assets.length) return [];
  return sql<{ asset_identifier: string; balance: string }[]>`
    SELECT a.asset_identifier, c.balance::text AS balance
    FROM unnest(${assets}::text[]) AS a(asset_identifier)
    CROSS JOIN LATERAL (
      SELECT balance FROM balance_checkpoints p
      WHERE p.principal = ${principal} AND p.asset_identifier = a.asset_identifier AND p.canonical AND p.block_height <= ${height}
      ORDER BY p.block_height DESC LIMIT 1
    ) c`;
}

/** Burn height of the canonical block at a stacks height. */
export async function rosettaBurnHeightAt(sql: Sql, height: number): Promise<number | undefined> {
  const [r] = await sql<{ burn_block_height: number }[]>`
    SELECT burn_block_height FROM blocks WHERE canonical AND block_height = ${height} LIMIT 1`;
  return r === undefined ? undefined : Number(r.burn_block_height);
}
