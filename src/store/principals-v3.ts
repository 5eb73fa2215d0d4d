/**
 * Reads of the /extended/v3/principals/{principal} family (src/api/routes/extended/principals.ts): keyset pages in the
 * reference's orders, each reading only its own rows plus one row either side.
 *   - transactions: principal_txs (sql/0040_principal_txs.sql) without the boot block's genesis txs that block 1
 *     adopted (roles bit 256: the reference leaves their rows non-canonical), plus the unconfirmed microblock rows;
 *     newest first by (block height, microblock sequence, tx index);
 *   - balance changes of a principal in given txs: the fee it paid, its STX/FT/NFT event amounts, per asset;
 *   - FT balances (ft_balances, balance DESC then identifier), NFT instances held (nft_custody and the unconfirmed
 *     microblock stream, identifier then value),
 *     pending mempool txs (sender, recipient, deployed or called contract; newest receipt first).
 * Identifiers compare byte-wise (COLLATE "C", indexes of sql/0080_v3_principal_pages.sql). Rows only.
 */
import type { Sql } from './sql.js';
import { heldCount, unconfirmedNftOwners } from './tokens.js';

/** A page read from a position: `next` is the first row of the following page, `prev` the key `limit` rows back. */
export interface KeysetPage<R, K> {
  rows: R[];
  total: number;
  next: K | null;
  prev: K | null;
}

/** Where a tx sits in the chain: the key of the principal transaction pages. */
export interface TxPosition {
  block_height: number;
  microblock_sequence: number;
  tx_index: number;
}

/** The reference's microblock sequence and tx index maxima (a cursor `h:0:0` that names no row means "from block h"). */
const I32_MAX = 2147483647;
const MAX_TX_INDEX = 0x7fff;

/** The summary fields of a tx (mined or pending), without the heavy JSON (source code, arguments, post-conditions). */
export interface TxSummaryFields {
  tx_id: string;
  tx_type: string;
  sender_address: string;
  nonce: number;
  sponsored: boolean;
  sponsor_address: string | null;
  sponsor_nonce: number | null;
  fee_rate: string;
  token_transfer_recipient: string | null;
  token_transfer_amount: string | null;
  token_transfer_memo: string | null;
  clarity_version: number | null;
  smart_contract_contract_id: string | null;
  contract_call_contract_id: string | null;
  function_name: string | null;
  alt_recipient: string | null;
  tenure_cause: string | null;
}

const SUMMARY_COLUMNS = `x.tx_id, x.tx_type, x.sender_address, x.nonce, x.sponsored, x.sponsor_address, x.sponsor_nonce,
  x.fee_rate::text AS fee_rate, x.token_transfer_recipient, x.token_transfer_amount::text AS token_transfer_amount,
  x.api -> 'token_transfer' ->> 'memo' AS token_transfer_memo,
  (x.api -> 'smart_contract' ->> 'clarity_version')::int AS clarity_version, x.smart_contract_contract_id,
  x.contract_call_contract_id, x.api -> 'contract_call' ->> 'function_name' AS function_name,
  x.api -> 'coinbase_payload' ->> 'alt_recipient' AS alt_recipient,
  x.api -> 'tenure_change_payload' ->> 'cause' AS tenure_cause`;

/** A principal's mined tx: its summary, placement, roles (sql/0040 bits) and STX moved by its events. */
export interface PrincipalTxV3Row extends TxSummaryFields, TxPosition {
  index_block_hash: string;
  microblock_hash: string;
  block_hash: string;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  status: string;
  roles: number;
  /** STX the principal sent / received in the tx's STX events (the fee not included) */
  event_stx_sent: string;
  event_stx_received: string;
}

/**
 * The rows of the v3 set (every role, genesis txs adopted by block 1 left out), anchored and unconfirmed, that match
 * `cond`: at most `limit` of each kind in chain order `dir`, so a page reads its own rows whatever the plan.
 */
function placedRows(sql: Sql, principal: string, cond: ReturnType<Sql>, dir: 'ASC' | 'DESC', limit: number) {
  const order = dir === 'DESC'
    ? sql`ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC`
    : sql`ORDER BY block_height ASC, microblock_sequence ASC, tx_index ASC`;
  return sql`
    (SELECT tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence, tx_index, roles
     FROM principal_txs WHERE principal = ${principal} AND roles & 256 = 0 ${cond} ${order} LIMIT ${limit})
    UNION ALL
    (SELECT tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence, tx_index, roles
     FROM principal_tx_roles(ARRAY['']) u WHERE u.principal = ${principal} ${cond} ${order} LIMIT ${limit})`;
}

/**
 * A page of the principal's txs, newest first, from `cursor` (inclusive; default: the newest). A cursor `h:0:0` that
 * names no row of the principal starts at the newest row of height h, as the reference resolves it.
 */
export async function principalTxPage(
  sql: Sql,
  principal: string,
  q: { limit: number; cursor?: TxPosition },
): Promise<KeysetPage<PrincipalTxV3Row, TxPosition>> {
  let cursor = q.cursor && fitInt4(q.cursor);
  if (cursor && cursor.microblock_sequence === 0 && cursor.tx_index === 0) {
    const exact = await sql`
      SELECT 1 FROM (${placedRows(sql, principal, sql`AND block_height = ${cursor.block_height}
        AND microblock_sequence = 0 AND tx_index = 0`, 'DESC', 1)}) r`;
    if (!exact.length) cursor = { block_height: cursor.block_height, microblock_sequence: I32_MAX, tx_index: MAX_TX_INDEX };
  }
  const from: ReturnType<Sql> = cursor
    ? sql`AND (block_height, microblock_sequence, tx_index) <= (${cursor.block_height}, ${cursor.microblock_sequence}, ${cursor.tx_index})`
    : sql``;
  const rows = await sql<PrincipalTxV3Row[]>`
    WITH pg AS (
      SELECT * FROM (${placedRows(sql, principal, from, 'DESC', q.limit + 1)}) r
      ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC
      LIMIT ${q.limit + 1}
    )
    SELECT ${sql.unsafe(SUMMARY_COLUMNS)}, x.index_block_hash, x.microblock_hash, x.block_hash, x.block_height,
      x.microblock_sequence, x.tx_index, x.block_time, x.burn_block_time, x.burn_block_height, x.status, pg.roles,
      COALESCE(s.sent, 0)::text AS event_stx_sent, COALESCE(s.received, 0)::text AS event_stx_received
    FROM pg JOIN txs x USING (tx_id, index_block_hash, microblock_hash)
    LEFT JOIN LATERAL (
      SELECT sum(e.amount) FILTER (WHERE e.sender = ${principal}) AS sent,
        sum(e.amount) FILTER (WHERE e.recipient = ${principal}) AS received
      FROM events e
      WHERE e.tx_id = x.tx_id AND e.index_block_hash = x.index_block_hash AND e.microblock_hash = x.microblock_hash
        AND e.event_type = 'stx_asset' AND (e.sender = ${principal} OR e.recipient = ${principal})
    ) s ON true
    ORDER BY pg.block_height DESC, pg.microblock_sequence DESC, pg.tx_index DESC`;
  const page = rows.slice(0, q.limit);
  const next = rows.length > q.limit ? position(rows[q.limit]) : null;
  let prev: TxPosition | null = null;
  let total = 0;
  if (page.length) {
    const first = page[0];
    const [before, [count]] = await Promise.all([
      sql<TxPosition[]>`
        SELECT block_height, microblock_sequence, tx_index FROM (${placedRows(sql, principal, sql`
          AND (block_height, microblock_sequence, tx_index) > (${first.block_height}, ${first.microblock_sequence}, ${first.tx_index})`,
          'ASC', q.limit)}) r
        ORDER BY block_height ASC, microblock_sequence ASC, tx_index ASC
        LIMIT ${q.limit}`,
      // all_txs counts the genesis rows that have events of the principal (sql/0040): take those off
      sql<{ n: number }[]>`
        SELECT (COALESCE((SELECT all_txs FROM principal_tx_counts WHERE principal = ${principal}), 0)
          - (SELECT count(*) FROM principal_txs WHERE principal = ${principal} AND block_height = 1
              AND roles & 256 <> 0 AND roles & 224 <> 0)
          + (SELECT count(*) FROM principal_tx_roles(ARRAY['']) u WHERE u.principal = ${principal}))::int AS n`,
    ]);
    prev = before.length ? position(before[before.length - 1]) : null;
    total = count.n;
  }
  return { rows: page, total, next, prev };
}

/**
 * The same position with its microblock sequence and tx index within the int4 columns: past the largest value a
 * column holds, every row's value is below it, so the position is the same as at the largest value (a tx index
 * past it) or as the end of the height (a microblock sequence past it).
 */
function fitInt4(c: TxPosition): TxPosition {
  if (c.microblock_sequence > I32_MAX) return { block_height: c.block_height, microblock_sequence: I32_MAX, tx_index: I32_MAX };
  return c.tx_index > I32_MAX ? { ...c, tx_index: I32_MAX } : c;
}

function position(r: TxPosition): TxPosition {
  return { block_height: Number(r.block_height), microblock_sequence: r.microblock_sequence, tx_index: r.tx_index };
}

/** What a principal's balance of one asset did in one tx: 1 STX (the fee it paid included), 2 an FT, 3 an NFT (count). */
export interface BalanceChangeRow extends TxPosition {
  tx_id: string;
  asset_type: 1 | 2 | 3;
  /** `stx` for STX, else the asset identifier */
  asset_identifier: string;
  sent: string;
  received: string;
}

/**
 * Every balance change of the principal in the canonical placements of these txs (genesis txs adopted by block 1 left
 * out, as the reference leaves them non-canonical): the fee as STX sent by the payer (the sponsor of a sponsored tx;
 * a zero fee too), STX and FT event amounts, NFT events counted one token each; one row per (tx, asset). In no order:
 * the answer has at most one row per asset the principal touched in each given tx.
 */
export async function balanceChanges(sql: Sql, principal: string, txIds: string[]): Promise<BalanceChangeRow[]> {
  if (!txIds.length) return [];
  return sql<BalanceChangeRow[]>`
    WITH t AS (
      SELECT x.tx_id, x.index_block_hash, x.microblock_hash, x.block_height, x.microblock_sequence, x.tx_index, x.fee_rate,
        CASE WHEN x.sponsored THEN x.sponsor_address ELSE x.sender_address END AS payer
      FROM txs x
      WHERE x.tx_id = ANY(${txIds}) AND x.canonical AND x.microblock_canonical
        AND NOT (x.block_height = 1 AND x.microblock_hash = '' AND x.seq < (
          SELECT b.seq FROM blocks b WHERE b.index_block_hash = x.index_block_hash))
    ), d AS (
      SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index, 1 AS asset_type, 'stx' AS asset_identifier,
        t.fee_rate AS sent, 0::numeric AS received
      FROM t WHERE t.payer = ${principal}
      UNION ALL
      SELECT t.tx_id, t.block_height, t.microblock_sequence, t.tx_index,
        CASE e.event_type WHEN 'stx_asset' THEN 1 WHEN 'fungible_token_asset' THEN 2 ELSE 3 END,
        CASE WHEN e.event_type = 'stx_asset' THEN 'stx' ELSE e.asset_identifier END,
        CASE WHEN e.sender = ${principal} THEN (CASE WHEN e.event_type = 'non_fungible_token_asset' THEN 1 ELSE e.amount END)
          ELSE 0 END,
        CASE WHEN e.recipient = ${principal} THEN (CASE WHEN e.event_type = 'non_fungible_token_asset' THEN 1 ELSE e.amount END)
          ELSE 0 END
      FROM t JOIN events e ON e.tx_id = t.tx_id AND e.index_block_hash = t.index_block_hash
        AND e.microblock_hash = t.microblock_hash
      WHERE e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
        AND (e.sender = ${principal} OR e.recipient = ${principal})
    )
    SELECT tx_id, block_height, microblock_sequence, tx_index, asset_type, asset_identifier,
      sum(sent)::text AS sent, sum(received)::text AS received
    FROM d
    GROUP BY tx_id, block_height, microblock_sequence, tx_index, asset_type, asset_identifier`;
}

/** The key of the FT balance pages: balance DESC, then asset identifier. */
export interface FtBalanceKey {
  balance: string;
  token: string;
}

/**
 * Up to `limit` of the principal's positive FT balances next to `key` in page order (balance DESC, identifier ASC):
 * `after` reads from the key on (inclusive or not), `before` back from it, nearest first. Two index ranges (the rest of
 * the key's balance, then the other balances), as no single row comparison states a mixed order.
 */
function ftRange(sql: Sql, principal: string, key: FtBalanceKey | undefined, dir: 'after' | 'before', inclusive: boolean, limit: number) {
  const positive = sql`principal = ${principal} AND balance > 0`;
  if (!key) {
    return sql<FtBalanceKey[]>`
      SELECT asset_identifier AS token, balance::text AS balance FROM ft_balances WHERE ${positive}
      ORDER BY ft_balances.balance DESC, asset_identifier COLLATE "C" ASC LIMIT ${limit}`;
  }
  const b = key.balance;
  if (dir === 'after') {
    const same = inclusive ? sql`asset_identifier COLLATE "C" >= ${key.token}` : sql`asset_identifier COLLATE "C" > ${key.token}`;
    return sql<FtBalanceKey[]>`
      SELECT r.token, r.balance::text AS balance FROM (
        (SELECT asset_identifier AS token, balance FROM ft_balances
         WHERE ${positive} AND balance = ${b}::numeric AND ${same}
         ORDER BY ft_balances.balance DESC, asset_identifier COLLATE "C" ASC LIMIT ${limit})
        UNION ALL
        (SELECT asset_identifier, balance FROM ft_balances WHERE ${positive} AND balance < ${b}::numeric
         ORDER BY ft_balances.balance DESC, asset_identifier COLLATE "C" ASC LIMIT ${limit})
      ) r
      ORDER BY r.balance DESC, r.token COLLATE "C" ASC LIMIT ${limit}`;
  }
  const same = inclusive ? sql`asset_identifier COLLATE "C" <= ${key.token}` : sql`asset_identifier COLLATE "C" < ${key.token}`;
  return sql<FtBalanceKey[]>`
    SELECT r.token, r.balance::text AS balance FROM (
      (SELECT asset_identifier AS token, balance FROM ft_balances
       WHERE ${positive} AND balance = ${b}::numeric AND ${same}
       ORDER BY ft_balances.balance ASC, asset_identifier COLLATE "C" DESC LIMIT ${limit})
      UNION ALL
      (SELECT asset_identifier, balance FROM ft_balances WHERE ${positive} AND balance > ${b}::numeric
       ORDER BY ft_balances.balance ASC, asset_identifier COLLATE "C" DESC LIMIT ${limit})
    ) r
    ORDER BY r.balance ASC, r.token COLLATE "C" DESC LIMIT ${limit}`;
}

/** A page of the principal's positive FT balances (canonical anchored chain), from `cursor` (inclusive). */
export async function ftBalancePage(
  sql: Sql,
  principal: string,
  q: { limit: number; cursor?: FtBalanceKey },
): Promise<KeysetPage<FtBalanceKey, FtBalanceKey>> {
  const rows = await ftRange(sql, principal, q.cursor, 'after', true, q.limit + 1);
  const page = rows.slice(0, q.limit);
  if (!page.length) return { rows: [], total: 0, next: null, prev: null };
  const [before, [count]] = await Promise.all([
    ftRange(sql, principal, page[0], 'before', false, q.limit),
    // the maintained count of the principal's positive balances (ft_principal_counts, sql/0112)
    sql<{ n: number }[]>`SELECT COALESCE((SELECT positive FROM ft_principal_counts WHERE principal = ${principal}), 0)::int AS n`,
  ]);
  return { rows: page, total: count.n, next: rows[q.limit] ?? null, prev: before[before.length - 1] ?? null };
}

/** The key (and content) of the NFT balance pages: asset identifier, then value. */
export interface NftHoldingKey {
  asset_identifier: string;
  value_hex: string;
}

/**
 * A page of the NFT instances the principal owns, from `cursor` (inclusive): nft_custody (canonical anchored chain)
 * with the unconfirmed microblock stream's latest owner of the keys it touches, as /extended/v1/tokens/nft/holdings.
 */
export async function nftHoldingPage(
  sql: Sql,
  principal: string,
  q: { limit: number; cursor?: NftHoldingKey },
): Promise<KeysetPage<NftHoldingKey, NftHoldingKey>> {
  const held = (cond: ReturnType<Sql>, dir: 'ASC' | 'DESC', limit: number) => {
    const order = dir === 'ASC'
      ? sql`ORDER BY asset_identifier COLLATE "C" ASC, value_hex COLLATE "C" ASC`
      : sql`ORDER BY asset_identifier COLLATE "C" DESC, value_hex COLLATE "C" DESC`;
    return sql<NftHoldingKey[]>`
      WITH mb AS (${unconfirmedNftOwners(sql)})
      SELECT * FROM (
        (SELECT c.asset_identifier, c.value_hex FROM nft_custody c
         WHERE c.owner = ${principal} ${cond}
           AND NOT EXISTS (SELECT 1 FROM mb WHERE mb.asset_identifier = c.asset_identifier AND mb.value_hex = c.value_hex)
         ${order} LIMIT ${limit})
        UNION ALL
        (SELECT asset_identifier, value_hex FROM mb WHERE owner = ${principal} ${cond} ${order} LIMIT ${limit})
      ) h
      ${order} LIMIT ${limit}`;
  };
  const c = q.cursor;
  const from: ReturnType<Sql> = c
    ? sql`AND (asset_identifier COLLATE "C", value_hex COLLATE "C") >= (${c.asset_identifier}, ${c.value_hex})`
    : sql``;
  const rows = await held(from, 'ASC', q.limit + 1);
  const page = rows.slice(0, q.limit);
  if (!page.length) return { rows: [], total: 0, next: null, prev: null };
  const first = page[0];
  const [before, [count]] = await Promise.all([
    held(sql`AND (asset_identifier COLLATE "C", value_hex COLLATE "C") < (${first.asset_identifier}, ${first.value_hex})`, 'DESC', q.limit),
    sql<{ n: number }[]>`SELECT ${heldCount(sql, principal)} AS n`,
  ]);
  return { rows: page, total: count.n, next: rows[q.limit] ?? null, prev: before[before.length - 1] ?? null };
}

/** The key of the mempool pages: receipt time DESC, then tx id DESC. */
export interface MempoolKey {
  receipt_time: number;
  tx_id: string;
}

export interface MempoolSummaryRow extends TxSummaryFields, MempoolKey {
  receipt_block_height: number;
  status: string;
}

/**
 * Pending txs that involve the principal: as sender, token-transfer recipient, deployed or called contract (the
 * columns of mempool_pending, aliased p).
 */
function involves(sql: Sql, principal: string) {
  return sql`(p.sender_address = ${principal} OR p.token_transfer_recipient = ${principal}
    OR p.smart_contract_contract_id = ${principal} OR p.contract_call_contract_id = ${principal})`;
}

/** A page of the principal's pending mempool txs, newest receipt first, from `cursor` (inclusive). */
export async function mempoolPage(
  sql: Sql,
  principal: string,
  q: { limit: number; cursor?: MempoolKey },
): Promise<KeysetPage<MempoolSummaryRow, MempoolKey>> {
  const c = q.cursor;
  const from = c
    ? sql`AND (p.receipt_time < ${c.receipt_time} OR (p.receipt_time = ${c.receipt_time} AND p.tx_id COLLATE "C" <= ${c.tx_id}))`
    : sql``;
  const rows = await sql<MempoolSummaryRow[]>`
    SELECT ${sql.unsafe(SUMMARY_COLUMNS)}, x.receipt_time, x.receipt_block_height, x.status
    FROM mempool_pending p JOIN mempool_txs x ON x.tx_id = p.tx_id
    WHERE ${involves(sql, principal)} ${from}
    ORDER BY p.receipt_time DESC, p.tx_id COLLATE "C" DESC
    LIMIT ${q.limit + 1}`;
  const page = rows.slice(0, q.limit);
  if (!page.length) return { rows: [], total: 0, next: null, prev: null };
  const first = page[0];
  const [before, [count]] = await Promise.all([
    sql<MempoolKey[]>`
      SELECT p.receipt_time, p.tx_id FROM mempool_pending p
      WHERE ${involves(sql, principal)}
        AND (p.receipt_time > ${first.receipt_time} OR (p.receipt_time = ${first.receipt_time} AND p.tx_id COLLATE "C" > ${first.tx_id}))
      ORDER BY p.receipt_time ASC, p.tx_id COLLATE "C" ASC
      LIMIT ${q.limit}`,
    sql<{ n: number }[]>`SELECT count(*)::int AS n FROM mempool_pending p WHERE ${involves(sql, principal)}`,
  ]);
  const key = (r: MempoolKey): MempoolKey => ({ receipt_time: Number(r.receipt_time), tx_id: r.tx_id });
  return {
    rows: page,
    total: count.n,
    next: rows[q.limit] ? key(rows[q.limit]) : null,
    prev: before.length ? key(before[before.length - 1]) : null,
  };
}
