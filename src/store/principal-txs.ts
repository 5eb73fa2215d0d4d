/**
 * A principal's transactions from principal_txs (sql/0040_principal_txs.sql: one row per principal × canonical anchored
 * placement, with the principal's roles) plus, at read time, the unconfirmed microblock rows; totals from
 * principal_tx_counts when the page is not cut at a height below the tip. Also the asset-event reads of an address
 * (v1 assets, stx_inbound, v2 per-tx event counts and events). Rows only.
 */
import type postgres from 'postgres';
import { unprepared } from './connect.js';
import type { Sql } from './sql.js';
import { ABI_SUBQUERY } from './txs.js';
import type { TxDbRow } from './txs.js';

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** Which of the reference's sets: v1 /transactions (principal_stx_txs), v1 with_transfers, v2 transactions. */
export type PrincipalTxSet = 'stx' | 'transfers' | 'all';
/** Which rows of principal_txs belong to each set (the roles bits of sql/0040_principal_txs.sql). */
const IN_SET: Record<PrincipalTxSet, string> = {
  stx: 'roles & 63 <> 0 AND roles & 256 = 0',
  transfers: 'roles & 253 <> 0',
  all: '(roles & 256 = 0 OR roles & 224 <> 0)',
};
const COUNT_COLUMN: Record<PrincipalTxSet, string> = { stx: 'stx_txs', transfers: 'transfer_txs', all: 'all_txs' };

export interface PrincipalTxQuery {
  set: PrincipalTxSet;
  /** rows at heights ≤ maxHeight (undefined: every height, unconfirmed microblocks included) */
  maxHeight?: number;
  /** only rows at exactly this height (the reference's `height`) */
  atHeight?: number;
  /** undefined: every row (the reference pages nothing at a single height on with_transfers) */
  limit?: number;
  offset: number;
}

export type PrincipalTxRow = TxDbRow & { sender_address: string; fee_rate: string; sponsor_address: string | null; sponsored: boolean };

/** One page of the principal's txs, newest first (block height, microblock sequence, tx index), and the set's total. */
export async function principalTxPage(
  sql: Sql,
  principal: string,
  q: PrincipalTxQuery,
): Promise<{ total: number; rows: PrincipalTxRow[] }> {
  const inSet = sql.unsafe(IN_SET[q.set]);
  const heightCond =
    q.atHeight !== undefined
      ? sql`AND block_height = ${q.atHeight}`
      : q.maxHeight !== undefined
        ? sql`AND block_height <= ${q.maxHeight}`
        : sql``;
  const [tip] = await sql<{ h: number }[]>`SELECT COALESCE(max(block_height), 0)::int AS h FROM blocks WHERE canonical`;
  // The total: the maintained count (plus unconfirmed rows) unless the page stops below the tip or at one height.
  const fromCounts = q.atHeight === undefined && (q.maxHeight === undefined || q.maxHeight >= tip.h);
  const withUnconfirmed = q.atHeight === undefined ? q.maxHeight === undefined || q.maxHeight > tip.h : q.atHeight > tip.h;
  const unconfirmed = withUnconfirmed
    ? sql`UNION ALL SELECT tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence, tx_index
          FROM principal_tx_roles(ARRAY['']) u WHERE u.principal = ${principal} AND ${inSet} ${heightCond}`
    : sql``;
  const page = q.limit === undefined ? sql`` : sql`LIMIT ${q.limit} OFFSET ${q.offset}`;
  // the page's rows come from the newest limit + offset of the principal's index (read in index order, however long
  // its history), merged with the unconfirmed ones
  const branchLimit =
    q.limit === undefined ? sql`` : sql`ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC LIMIT ${q.limit + q.offset}`;
  const rows = await unprepared(sql<PrincipalTxRow[]>`
    WITH placed AS (
      (SELECT tx_id, index_block_hash, microblock_hash, block_height, microblock_sequence, tx_index
      FROM principal_txs WHERE principal = ${principal} AND ${inSet} ${heightCond} ${branchLimit})
      ${unconfirmed}
    ), pg AS (
      SELECT * FROM placed ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC ${page}
    )
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)}
    FROM pg JOIN txs x USING (tx_id, index_block_hash, microblock_hash)
    ORDER BY pg.block_height DESC, pg.microblock_sequence DESC, pg.tx_index DESC`);
  let total: number;
  if (fromCounts) {
    const [c] = await sql<{ n: number }[]>`
      SELECT (COALESCE((SELECT ${sql.unsafe(COUNT_COLUMN[q.set])} FROM principal_tx_counts WHERE principal = ${principal}), 0)
        + ${withUnconfirmed
          ? sql`(SELECT count(*) FROM principal_tx_roles(ARRAY['']) u WHERE u.principal = ${principal} AND ${inSet} ${heightCond})`
          : sql`0`})::int AS n`;
    total = c.n;
  } else {
    const [c] = await sql<{ n: number }[]>`
      SELECT (
        (SELECT count(*) FROM principal_txs WHERE principal = ${principal} AND ${inSet} ${heightCond})
        + ${withUnconfirmed
          ? sql`(SELECT count(*) FROM principal_tx_roles(ARRAY['']) u WHERE u.principal = ${principal} AND ${inSet} ${heightCond})`
          : sql`0`})::int AS n`;
    total = c.n;
  }
  return { total, rows };
}

export interface EventCountsRow {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  stx_sent: string;
  stx_received: string;
  stx_transfer: number;
  stx_mint: number;
  stx_burn: number;
  ft_transfer: number;
  ft_mint: number;
  ft_burn: number;
  nft_transfer: number;
  nft_mint: number;
  nft_burn: number;
}

/** For each placed tx: the principal's STX sent (events) / received and its STX/FT/NFT event counts by kind. */
export async function principalEventCounts(sql: Sql, principal: string, rows: readonly PrincipalTxRow[]): Promise<EventCountsRow[]> {
  if (!rows.length) return [];
  const keys = rows.map((r) => ({ t: r.tx_id, b: r.index_block_hash, m: r.microblock_hash }));
  return sql<EventCountsRow[]>`
    SELECT k.t AS tx_id, k.b AS index_block_hash, k.m AS microblock_hash,
      COALESCE(sum(e.amount) FILTER (WHERE e.event_type = 'stx_asset' AND e.sender = ${principal}), 0)::text AS stx_sent,
      COALESCE(sum(e.amount) FILTER (WHERE e.event_type = 'stx_asset' AND e.recipient = ${principal}), 0)::text AS stx_received,
      count(*) FILTER (WHERE e.event_type = 'stx_asset' AND e.asset_event_type = 'transfer')::int AS stx_transfer,
      count(*) FILTER (WHERE e.event_type = 'stx_asset' AND e.asset_event_type = 'mint')::int AS stx_mint,
      count(*) FILTER (WHERE e.event_type = 'stx_asset' AND e.asset_event_type = 'burn')::int AS stx_burn,
      count(*) FILTER (WHERE e.event_type = 'fungible_token_asset' AND e.asset_event_type = 'transfer')::int AS ft_transfer,
      count(*) FILTER (WHERE e.event_type = 'fungible_token_asset' AND e.asset_event_type = 'mint')::int AS ft_mint,
      count(*) FILTER (WHERE e.event_type = 'fungible_token_asset' AND e.asset_event_type = 'burn')::int AS ft_burn,
      count(*) FILTER (WHERE e.event_type = 'non_fungible_token_asset' AND e.asset_event_type = 'transfer')::int AS nft_transfer,
      count(*) FILTER (WHERE e.event_type = 'non_fungible_token_asset' AND e.asset_event_type = 'mint')::int AS nft_mint,
      count(*) FILTER (WHERE e.event_type = 'non_fungible_token_asset' AND e.asset_event_type = 'burn')::int AS nft_burn
    FROM json_to_recordset(${JSON.stringify(keys)}::text::json) AS k(t text, b text, m text)
    LEFT JOIN events e ON e.tx_id = k.t AND e.index_block_hash = k.b AND e.microblock_hash = k.m
      AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
      AND (e.sender = ${principal} OR e.recipient = ${principal})
    GROUP BY k.t, k.b, k.m`;
}

export interface AddressEventRow {
  event_index: number;
  event_type: string;
  asset_event_type: string | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  api: Record<string, unknown>;
}

/** Does any canonical placement of this tx exist (mined)? */
export async function txExists(sql: Sql, txId: string): Promise<boolean> {
  const r = await sql`SELECT 1 FROM txs WHERE tx_id = ${txId} LIMIT 1`;
  return r.length > 0;
}

/** The principal's STX/FT/NFT events of a tx (canonical placement), by event index, paged; with the total. */
export async function principalTxEvents(
  sql: Sql,
  principal: string,
  txId: string,
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: AddressEventRow[] }> {
  const rows = await sql<(AddressEventRow & { total: number })[]>`
    SELECT event_index, event_type, asset_event_type, sender, recipient, amount::text AS amount, asset_identifier, api,
      (count(*) OVER())::int AS total
    FROM events
    WHERE tx_id = ${txId} AND canonical AND microblock_canonical
      AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
      AND (sender = ${principal} OR recipient = ${principal})
    ORDER BY event_index ASC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { total: rows[0]?.total ?? 0, rows };
}

/**
 * The arms of a principal's asset events (the reference's: an STX, FT or NFT event it sent, one it received from
 * another principal, an STX lock of its address), canonical only, that satisfy `cond` (given the event row's alias).
 * With `newest`, each arm only its `newest` rows of highest height, read in the order of its index
 * (events_sender_height, events_recipient_height, events_locked_height of sql/0010); without `rows`, heights only.
 */
function assetArms(sql: Sql, principal: string, cond: (alias: string) => Fragment, opts: { newest?: number; rows: boolean }): Fragment {
  const { newest } = opts;
  const cols = opts.rows ? sql`e.api, e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.tx_index, e.event_index` : sql`e.block_height`;
  const bound = newest === undefined ? sql`` : sql`ORDER BY e.block_height DESC LIMIT ${newest}`;
  const assets = sql`e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')`;
  return sql`
    (SELECT ${cols} FROM events e
     WHERE e.sender = ${principal} AND e.sender IS NOT NULL AND e.canonical AND e.microblock_canonical AND ${assets} AND ${cond('e')}
     ${bound})
    UNION ALL
    (SELECT ${cols} FROM events e
     WHERE e.recipient = ${principal} AND e.recipient IS NOT NULL AND e.canonical AND e.microblock_canonical AND ${assets}
       AND e.sender IS DISTINCT FROM ${principal} AND ${cond('e')}
     ${bound})
    UNION ALL
    (SELECT ${cols} FROM events e
     WHERE e.locked_address = ${principal} AND e.locked_address IS NOT NULL AND e.canonical AND e.microblock_canonical
       AND e.event_type = 'stx_lock' AND ${cond('e')}
     ${bound})`;
}

/**
 * The principal's asset events (STX lock, STX, FT, NFT) up to a height, newest first (v1 /assets). `total` is the
 * maintained count of its canonical anchored events (asset_event_counts, sql/0110), less those above the height, plus
 * the unconfirmed microblock stream's at or below it; 0 past the last page (the reference counts within the page's
 * query). The page sorts only the events at or above the lowest height among each arm's newest limit + offset.
 */
export async function principalAssetEvents(
  sql: Sql,
  principal: string,
  maxHeight: number,
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: { api: unknown }[] }> {
  const keep = page.limit + page.offset;
  const upTo = (a: string) => sql`${sql(`${a}.block_height`)} <= ${maxHeight}`;
  const rows = await sql<{ api: unknown }[]>`
    WITH newest AS (
      SELECT block_height FROM (${assetArms(sql, principal, upTo, { newest: keep, rows: false })}) a ORDER BY block_height DESC LIMIT ${keep}
    )
    SELECT a.api FROM (${assetArms(sql, principal, (x) => sql`${upTo(x)} AND ${sql(`${x}.block_height`)} >= (SELECT min(block_height) FROM newest)`, { rows: true })}) a
    JOIN txs t USING (tx_id, index_block_hash, microblock_hash)
    ORDER BY a.block_height DESC, t.microblock_sequence DESC, a.tx_index DESC, a.event_index DESC
    LIMIT ${page.limit} OFFSET ${page.offset}`;
  if (!rows.length) return { total: 0, rows };
  const count = (cond: (a: string) => Fragment) => sql`(SELECT count(*) FROM (${assetArms(sql, principal, cond, { rows: false })}) c)`;
  const [{ total }] = await sql<{ total: number }[]>`
    SELECT (COALESCE((SELECT n FROM asset_event_counts WHERE principal = ${principal}), 0)
      - ${count((a) => sql`${sql(`${a}.block_height`)} > ${maxHeight} AND ${sql(`${a}.index_block_hash`)} <> ''`)}
      + ${count((a) => sql`${upTo(a)} AND ${sql(`${a}.index_block_hash`)} = ''`)})::int AS total`;
  return { total, rows };
}

export interface InboundRow {
  sender: string;
  amount: string;
  memo: string;
  block_height: number;
  tx_id: string;
  transfer_type: 'bulk-send' | 'stx-transfer' | 'stx-transfer-memo';
  tx_index: number;
}

/**
 * The rows of the inbound-transfer arms (the reference's three, in its order: 1 bulk-send, an STX event followed by
 * a send-many-memo print; 2 stx-transfer-memo, an STX event with a memo; 3 stx-transfer, a token-transfer tx) that
 * satisfy `cond` (given the alias of the arm's event or tx row), canonical only. With `newest`, each arm only its
 * `newest` rows of highest height, read in the order of its index (events_recipient_height, events_stx_memo_recipient
 * of sql/0109, txs_list_recipient).
 */
function inboundArms(sql: Sql, principal: string, arms: number[], cond: (alias: string) => Fragment, newest?: number): Fragment {
  const bound = (order: string) => (newest === undefined ? sql`` : sql`ORDER BY ${sql.unsafe(order)}.block_height DESC LIMIT ${newest}`);
  // the heights alone (`newest`): no tx row joined, so the event arms read their index in order and stop at `newest`
  // (joined first, the planner fetched every row of a busy principal: 370 ms for 18,000 memo events)
  const heightsOnly = newest !== undefined;
  const parts: Fragment[] = [];
  if (arms.includes(1))
    parts.push(sql`(
      SELECT ${heightsOnly ? sql`e.block_height` : sql`e.amount::text AS amount, l.value_hex AS memo, e.sender, e.block_height, e.tx_id, t.microblock_sequence,
        e.tx_index, 'bulk-send' AS transfer_type, 1 AS arm, e.event_index`}
      FROM events e
      ${heightsOnly ? sql`` : sql`JOIN txs t USING (tx_id, index_block_hash, microblock_hash)`}
      JOIN events l ON l.tx_id = e.tx_id AND l.index_block_hash = e.index_block_hash AND l.microblock_hash = e.microblock_hash
        AND l.event_index = e.event_index + 1 AND l.event_type = 'smart_contract_log' AND l.contract_id = ANY(send_many_contracts())
        AND l.canonical AND l.microblock_canonical
      WHERE e.event_type = 'stx_asset' AND e.recipient = ${principal} AND e.canonical AND e.microblock_canonical AND ${cond('e')}
      ${bound('e')})`);
  if (arms.includes(2))
    parts.push(sql`(
      SELECT ${heightsOnly ? sql`e.block_height` : sql`e.amount::text AS amount, e.api -> 'asset' ->> 'memo' AS memo, e.sender, e.block_height, e.tx_id,
        t.microblock_sequence, e.tx_index, 'stx-transfer-memo' AS transfer_type, 2 AS arm, e.event_index`}
      FROM events e ${heightsOnly ? sql`` : sql`JOIN txs t USING (tx_id, index_block_hash, microblock_hash)`}
      WHERE e.event_type = 'stx_asset' AND e.recipient = ${principal} AND e.recipient IS NOT NULL AND e.canonical
        AND e.microblock_canonical AND (e.api -> 'asset' ->> 'memo') IS NOT NULL AND ${cond('e')}
      ${bound('e')})`);
  if (arms.includes(3))
    parts.push(sql`(
      SELECT ${heightsOnly ? sql`t.block_height` : sql`t.token_transfer_amount::text AS amount, t.api -> 'token_transfer' ->> 'memo' AS memo, t.sender_address AS sender,
        t.block_height, t.tx_id, t.microblock_sequence, t.tx_index, 'stx-transfer' AS transfer_type, 3 AS arm, 0 AS event_index`}
      FROM txs t
      -- only token transfers have a recipient (src/chain/tx.ts): no tx_type condition, which would draw the type index in
      WHERE t.canonical AND t.microblock_canonical AND t.token_transfer_recipient = ${principal}
        AND t.token_transfer_recipient IS NOT NULL AND ${cond('t')}
      ${bound('t')})`);
  return parts.reduce((a, b) => sql`${a} UNION ALL ${b}`);
}

/**
 * STX sent to the principal: token transfers, stx-transfer-memo events, send-many-memo bulk sends (v1 stx_inbound),
 * newest first. `total` is the maintained count of its canonical anchored rows (stx_inbound_counts, sql/0109), less
 * those above the requested height, plus the unconfirmed microblock stream's at or below it; 0 past the last page (the
 * reference counts within the page's query). The page sorts only the rows at or above the lowest height among the
 * newest limit + offset rows of each arm. Rows of one tx tie on the reference's sort key: they come here in its arms'
 * order, then event order (its own order for them follows where its rows sit on disk, which nothing here can know; the
 * conformance suite compares them as a set).
 */
export async function inboundTransfers(
  sql: Sql,
  principal: string,
  q: { maxHeight?: number; atHeight?: number; limit: number; offset: number },
): Promise<{ total: number; rows: InboundRow[] }> {
  const within = (a: string) =>
    q.atHeight !== undefined ? sql`${sql(`${a}.block_height`)} = ${q.atHeight}` : sql`${sql(`${a}.block_height`)} <= ${q.maxHeight ?? 0}`;
  // arm 1 (bulk sends: rare) walks the principal's every event: skipped when it has none, anchored (the maintained
  // count) or in the unconfirmed stream
  const [counts] = await sql<{ anchored: string; bulk: boolean }[]>`
    SELECT COALESCE(sum(n), 0)::text AS anchored,
      (COALESCE(sum(n) FILTER (WHERE arm = 1), 0) > 0
        OR EXISTS (${inboundArms(sql, principal, [1], (a) => sql`${sql(`${a}.index_block_hash`)} = ''`)})) AS bulk
    FROM stx_inbound_counts WHERE recipient = ${principal}`;
  const arms = counts.bulk ? [1, 2, 3] : [2, 3];
  const keep = q.limit + q.offset;
  const rows = await sql<InboundRow[]>`
    WITH newest AS (
      SELECT block_height FROM (${inboundArms(sql, principal, arms, within, keep)}) a
      ORDER BY block_height DESC LIMIT ${keep}
    )
    SELECT amount, memo, sender, block_height, tx_id, microblock_sequence, tx_index, transfer_type
    FROM (${inboundArms(sql, principal, arms, (a) => sql`${within(a)} AND ${sql(`${a}.block_height`)} >= (SELECT min(block_height) FROM newest)`)}) a
    ORDER BY block_height DESC, microblock_sequence DESC, tx_index DESC, arm, event_index
    LIMIT ${q.limit} OFFSET ${q.offset}`;
  if (!rows.length) return { total: 0, rows };
  const count = (cond: (a: string) => Fragment) => sql`(SELECT count(*) FROM (${inboundArms(sql, principal, arms, cond)}) c)`;
  const [{ total }] = await sql<{ total: number }[]>`
    SELECT (${
      q.atHeight !== undefined
        ? count(within)
        : sql`${counts.anchored}::bigint
          - ${count((a) => sql`${sql(`${a}.block_height`)} > ${q.maxHeight ?? 0} AND ${sql(`${a}.index_block_hash`)} <> ''`)}
          + ${count((a) => sql`${within(a)} AND ${sql(`${a}.index_block_hash`)} = ''`)}`
    })::int AS total`;
  return { total, rows };
}
