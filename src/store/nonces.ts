/**
 * Nonce and fee reads: a principal's highest executed / pending nonce (as origin or as sponsor), the pending nonces
 * in a range, the nonce as of a block; mempool fee percentiles. Rows only.
 */
import type { Sql } from './sql.js';

export interface NonceMaxima {
  executed: number | null;
  executed_sponsor: number | null;
  mempool: number | null;
  mempool_sponsor: number | null;
}

/** MAX(nonce) as sender and MAX(sponsor_nonce) as sponsor, over canonical txs and over pending mempool txs. */
export async function nonceMaxima(sql: Sql, principal: string): Promise<NonceMaxima> {
  const [r] = await sql<NonceMaxima[]>`
    SELECT
      (SELECT max(nonce) FROM txs WHERE sender_address = ${principal} AND canonical AND microblock_canonical)::int AS executed,
      (SELECT max(sponsor_nonce) FROM txs WHERE sponsor_address = ${principal} AND sponsored AND canonical
        AND microblock_canonical)::int AS executed_sponsor,
      (SELECT max(x.nonce) FROM mempool_pending p JOIN mempool_txs x ON x.tx_id = p.tx_id
        WHERE p.sender_address = ${principal})::int AS mempool,
      (SELECT max(x.sponsor_nonce) FROM mempool_pending p JOIN mempool_txs x ON x.tx_id = p.tx_id
        WHERE p.sponsor_address = ${principal} AND x.sponsored)::int AS mempool_sponsor`;
  return r;
}

/** Which of these nonces a pending mempool tx of the principal uses (as sender or sponsor). */
export async function pendingNonces(sql: Sql, principal: string, nonces: number[]): Promise<number[]> {
  if (!nonces.length) return [];
  const rows = await sql<{ nonce: number }[]>`
    SELECT x.nonce::int AS nonce FROM mempool_pending p JOIN mempool_txs x ON x.tx_id = p.tx_id
    WHERE p.sender_address = ${principal} AND x.nonce = ANY(${nonces})
    UNION
    SELECT x.sponsor_nonce::int FROM mempool_pending p JOIN mempool_txs x ON x.tx_id = p.tx_id
    WHERE p.sponsor_address = ${principal} AND x.sponsored AND x.sponsor_nonce = ANY(${nonces})`;
  return rows.map((r) => r.nonce);
}

/** The highest nonce the principal used (origin of an unsponsored tx, or sponsor) up to a height. */
export async function executedNonceAt(sql: Sql, principal: string, height: number): Promise<number | null> {
  const [r] = await sql<{ nonce: number | null }[]>`
    SELECT max(nonce)::int AS nonce FROM txs
    WHERE ((sender_address = ${principal} AND NOT sponsored) OR (sponsor_address = ${principal} AND sponsored))
      AND canonical AND microblock_canonical AND block_height <= ${height}`;
  return r.nonce;
}

/** Height of the block with this block hash (lower-case 0x hex), or at this height; canonical first (the reference's lookup). */
export async function blockHeightOf(sql: Sql, ref: { hash: string } | { height: number }): Promise<number | undefined> {
  const rows =
    'hash' in ref
      ? await sql<{ h: number }[]>`
          SELECT block_height::int AS h FROM blocks WHERE block_hash = ${ref.hash}
          ORDER BY canonical DESC, block_height DESC LIMIT 1`
      : await sql<{ h: number }[]>`SELECT block_height::int AS h FROM blocks WHERE block_height = ${ref.height}
          ORDER BY canonical DESC LIMIT 1`;
  return rows[0]?.h;
}

export interface FeePriorityRow {
  type: string | null;
  no_priority: number | null;
  low_priority: number | null;
  medium_priority: number | null;
  high_priority: number | null;
}

/** p25/p50/p75/p95 of pending fee rates, rounded: over all pending txs (type null) and per tx type (coinbase left out). */
export async function mempoolFeePriorities(sql: Sql): Promise<FeePriorityRow[]> {
  return sql<FeePriorityRow[]>`
    SELECT NULL::text AS type,
      round(percentile_cont(0.25) WITHIN GROUP (ORDER BY fee_rate))::float8 AS no_priority,
      round(percentile_cont(0.50) WITHIN GROUP (ORDER BY fee_rate))::float8 AS low_priority,
      round(percentile_cont(0.75) WITHIN GROUP (ORDER BY fee_rate))::float8 AS medium_priority,
      round(percentile_cont(0.95) WITHIN GROUP (ORDER BY fee_rate))::float8 AS high_priority
    FROM mempool_txs WHERE tx_id IN (SELECT tx_id FROM mempool_pending)
    UNION ALL
    SELECT tx_type,
      round(percentile_cont(0.25) WITHIN GROUP (ORDER BY fee_rate))::float8,
      round(percentile_cont(0.50) WITHIN GROUP (ORDER BY fee_rate))::float8,
      round(percentile_cont(0.75) WITHIN GROUP (ORDER BY fee_rate))::float8,
      round(percentile_cont(0.95) WITHIN GROUP (ORDER BY fee_rate))::float8
    FROM mempool_txs WHERE tx_id IN (SELECT tx_id FROM mempool_pending) AND tx_type <> 'coinbase'
    GROUP BY tx_type`;
}
