/**
 * Address routes (the mempool list of an address lives elsewhere):
 *   GET /extended/v1/address/:principal/stx                       STX balance, lock state, pending mempool flows
 *   GET /extended/v1/address/:principal/:tx_id/with_transfers      one tx with the principal's transfers in it
 */
import type { Router } from '../../http/router.js';
import { json, HttpError } from '../../http/response.js';
import type { ApiContext } from '../context.js';
import type { Sql } from '../../store/connect.js';
import { badParam, checkPrincipal, normalizeHash, queryBool } from '../params.js';
import { chainTip } from '../../store/chain-tip.js';
import { stxLockState } from '../pox-lock.js';
import { ABI_SUBQUERY, txJson, type TxDbRow } from '../serialize.js';
import type { ClarityJson } from '../../chain/clarity.js';

const HASH_RE = /^(0x)?[0-9a-fA-F]{64}$/;

/** until_block: a positive block height or a block hash (index or plain); undefined when absent. */
async function untilBlockHeight(sql: Sql, raw: string | null): Promise<number | undefined> {
  if (raw === null) return undefined;
  if (/^-?\d+$/.test(raw)) {
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1) badParam('querystring/until_block must be >= 1 (unexpected integer value for block height)');
    return n;
  }
  if (!HASH_RE.test(raw)) badParam('querystring/until_block must be a block height or a block hash');
  const hash = normalizeHash(raw);
  const [b] = await sql<{ block_height: number }[]>`
    SELECT block_height FROM blocks WHERE block_hash = ${hash} OR index_block_hash = ${hash}
    ORDER BY canonical DESC, block_height DESC LIMIT 1`;
  if (!b) throw new HttpError(404, 'block not found with hash');
  return b.block_height;
}

export interface StxBalance {
  balance: string;
  estimated_balance?: string;
  pending_balance_inbound?: string;
  pending_balance_outbound?: string;
  total_sent: string;
  total_received: string;
  total_fees_sent: string;
  total_miner_rewards_received: string;
  lock_tx_id: string;
  locked: string;
  lock_height: number;
  burnchain_lock_height: number;
  burnchain_unlock_height: number;
}

/**
 * The STX balance of `principal` as of stacks height `height` (canonical data only), whose burn reference height
 * (for lock expiry) is `burnHeight`. `withPending` adds the mempool flows.
 */
type Sums = { received: string; sent: string; fees: string; rewards: string };

/**
 * The principal's totals up to `height` from stx_totals (sql/0012_stx_totals.sql: every canonical anchored block,
 * kept by the ingest) plus the unconfirmed microblock rows up to `height`: a few index lookups, however long the
 * principal's history. Read in one statement with the canonical tip, so both come from one snapshot; undefined when
 * `height` is below the tip (an until_block query): the caller sums the history instead.
 */
async function maintainedSums(sql: Sql, principal: string, height: number): Promise<Sums | undefined> {
  const [r] = await sql<(Sums & { tip: number })[]>`
    SELECT
      (SELECT COALESCE(max(block_height), 0) FROM blocks WHERE canonical) AS tip,
      (COALESCE(t.received, 0)
        + (SELECT COALESCE(SUM(amount), 0) FROM events
           WHERE index_block_hash = '' AND event_type = 'stx_asset' AND recipient = ${principal} AND canonical
             AND microblock_canonical AND block_height <= ${height}))::text AS received,
      (COALESCE(t.sent, 0)
        + (SELECT COALESCE(SUM(amount), 0) FROM events
           WHERE index_block_hash = '' AND event_type = 'stx_asset' AND sender = ${principal} AND canonical
             AND microblock_canonical AND block_height <= ${height}))::text AS sent,
      (COALESCE(t.fees, 0)
        + (SELECT COALESCE(SUM(fee_rate), 0) FROM txs
           WHERE index_block_hash = '' AND canonical AND microblock_canonical AND block_height <= ${height}
             AND ((sender_address = ${principal} AND NOT sponsored) OR (sponsor_address = ${principal} AND sponsored))))::text AS fees,
      COALESCE(t.rewards, 0)::text AS rewards
    FROM (SELECT 1) AS one LEFT JOIN stx_totals t ON t.principal = ${principal}`;
  return r.tip <= height ? r : undefined;
}

/** The principal's totals up to `height`, summed over its whole history (any height). */
async function historySums(sql: Sql, principal: string, height: number): Promise<Sums> {
  const [sums] = await sql<Sums[]>`
    SELECT
      (SELECT COALESCE(SUM(amount), 0) FROM events
        WHERE event_type = 'stx_asset' AND recipient = ${principal} AND canonical AND microblock_canonical
          AND block_height <= ${height})::text AS received,
      (SELECT COALESCE(SUM(amount), 0) FROM events
        WHERE event_type = 'stx_asset' AND sender = ${principal} AND canonical AND microblock_canonical
          AND block_height <= ${height})::text AS sent,
      (SELECT COALESCE(SUM(fee_rate), 0) FROM txs
        WHERE ((sender_address = ${principal} AND NOT sponsored) OR (sponsor_address = ${principal} AND sponsored))
          AND canonical AND microblock_canonical AND block_height <= ${height})::text AS fees,
      (SELECT COALESCE(SUM(coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced), 0)
        FROM miner_rewards WHERE recipient = ${principal} AND canonical AND block_height <= ${height})::text AS rewards`;
  return sums;
}

export async function stxBalance(
  sql: Sql,
  principal: string,
  height: number,
  burnHeight: number,
  withPending: boolean,
): Promise<StxBalance> {
  const sums = (await maintainedSums(sql, principal, height)) ?? (await historySums(sql, principal, height));
  const received = BigInt(sums.received);
  const sent = BigInt(sums.sent);
  const fees = BigInt(sums.fees);
  const rewards = BigInt(sums.rewards);
  const balance = received - sent - fees + rewards;

  // The lock state: stx_lock events, then the pox-2/3/4 synthetic events (src/api/pox-lock.ts).
  const lock = await stxLockState(sql, principal, height, burnHeight);

  const out: StxBalance = { balance: balance.toString() } as StxBalance;
  if (withPending) {
    const [p] = await sql<{ inbound: string; outbound: string }[]>`
      SELECT
        (SELECT COALESCE(SUM(token_transfer_amount), 0) FROM mempool_txs
          WHERE NOT pruned AND token_transfer_recipient = ${principal})::text AS inbound,
        -- as the reference: the sender pays amount + fee (sponsored or not), a sponsor its sponsored fees on top
        (SELECT COALESCE(SUM(
            CASE WHEN sender_address = ${principal} THEN COALESCE(token_transfer_amount, 0) + fee_rate ELSE 0 END
            + CASE WHEN sponsored AND sponsor_address = ${principal} THEN fee_rate ELSE 0 END), 0)
          FROM mempool_txs
          WHERE NOT pruned AND (sender_address = ${principal} OR sponsor_address = ${principal}))::text AS outbound`;
    const inbound = BigInt(p.inbound);
    const outbound = BigInt(p.outbound);
    out.estimated_balance = (balance + inbound - outbound).toString();
    out.pending_balance_inbound = inbound.toString();
    out.pending_balance_outbound = outbound.toString();
  }
  out.total_sent = sent.toString();
  out.total_received = received.toString();
  out.total_fees_sent = fees.toString();
  out.total_miner_rewards_received = rewards.toString();
  out.lock_tx_id = lock.lock_tx_id;
  out.locked = lock.locked;
  out.lock_height = lock.lock_height;
  out.burnchain_lock_height = lock.burnchain_lock_height;
  out.burnchain_unlock_height = lock.burnchain_unlock_height;
  return out;
}

interface TransferRow {
  event_type: string;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  api: { asset?: { value?: ClarityJson } };
}

export function registerAddressesRoutes(router: Router, ctx: ApiContext): void {
  const sql = ctx.sql;

  router.get('/extended/v1/address/:principal/stx', async (req) => {
    const principal = checkPrincipal('params/principal', req.params.principal);
    const unanchored = queryBool(req, 'unanchored');
    const until = await untilBlockHeight(sql, req.query.get('until_block'));
    const tip = await chainTip(sql);
    // The reference answers 500 here on an empty chain (a bug): no block, nothing to reckon a balance against.
    if (!tip) throw new HttpError(404, 'Could not find block at height: 0 (no block has been received yet)');
    const height = until ?? (unanchored ? tip.block_height + 1 : tip.block_height);
    const refHeight = Math.min(height, tip.block_height);
    const [ref] = await sql<{ burn_block_height: number }[]>`
      SELECT burn_block_height FROM blocks WHERE canonical AND block_height = ${refHeight} LIMIT 1`;
    if (!ref) throw new HttpError(404, `Could not find block at height: ${refHeight}`);
    return json(200, await stxBalance(sql, principal, height, ref.burn_block_height, until === undefined));
  });

  router.get('/extended/v1/address/:principal/:tx_id/with_transfers', async (req) => {
    const principal = checkPrincipal('params/principal', req.params.principal);
    const txId = normalizeHash(req.params.tx_id);
    const [row] = await sql<(TxDbRow & { sender_address: string; fee_rate: string })[]>`
      SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
      WHERE x.tx_id = ${txId} AND x.canonical AND x.microblock_canonical
        AND (x.sender_address = ${principal} OR x.token_transfer_recipient = ${principal}
          OR x.contract_call_contract_id = ${principal} OR x.smart_contract_contract_id = ${principal}
          OR EXISTS (SELECT 1 FROM events e WHERE e.tx_id = x.tx_id
            AND e.event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
            AND (e.sender = ${principal} OR e.recipient = ${principal})))
      ORDER BY x.block_height DESC LIMIT 1`;
    if (!row) throw new HttpError(404, 'No matching transaction found');
    return json(200, await addressTxWithTransfers(sql, principal, row));
  });
}

/**
 * One tx as seen by `principal`: the tx plus the principal's STX flows and asset transfers in it (the with_transfers
 * answer; the push layer sends its first four members to `address-transaction:<principal>`).
 */
export async function addressTxWithTransfers(sql: Sql, principal: string, row: TxDbRow & { sender_address: string; fee_rate: string }) {
  const transfers = await sql<TransferRow[]>`
    SELECT event_type, sender, recipient, amount::text AS amount, asset_identifier, api FROM events
    WHERE tx_id = ${row.tx_id} AND index_block_hash = ${row.index_block_hash} AND microblock_hash = ${row.microblock_hash}
      AND canonical AND microblock_canonical
      AND event_type IN ('stx_asset', 'fungible_token_asset', 'non_fungible_token_asset')
      AND (sender = ${principal} OR recipient = ${principal})
    ORDER BY event_index DESC`;
  let sent = row.sender_address === principal ? BigInt(row.fee_rate) : 0n;
  let received = 0n;
  const stx_transfers: { amount: string; sender: string; recipient: string }[] = [];
  const ft_transfers: { asset_identifier: string; amount: string; sender: string; recipient: string }[] = [];
  const nft_transfers: { asset_identifier: string; value: ClarityJson; sender: string; recipient: string }[] = [];
  for (const t of transfers) {
    const sender = t.sender ?? '';
    const recipient = t.recipient ?? '';
    if (t.event_type === 'stx_asset') {
      const amount = BigInt(t.amount ?? '0');
      if (t.sender === principal) sent += amount;
      if (t.recipient === principal) received += amount;
      stx_transfers.push({ amount: amount.toString(), sender, recipient });
    } else if (t.event_type === 'fungible_token_asset') {
      ft_transfers.push({ asset_identifier: t.asset_identifier ?? '', amount: t.amount ?? '0', sender, recipient });
    } else {
      nft_transfers.push({ asset_identifier: t.asset_identifier ?? '', value: t.api.asset!.value!, sender, recipient });
    }
  }
  return {
    tx: txJson(row),
    stx_sent: sent.toString(),
    stx_received: received.toString(),
    stx_transfers,
    ft_transfers,
    nft_transfers,
  };
}
