/**
 * Answers built from store reads and pure serializers that REST and push share (a pushed object is exactly what the
 * REST API answers for it): a tx lookup, several tx lookups, a legacy block, an STX balance, an address tx with its
 * transfers. No SQL here: reads are in src/store.
 */
import type { Sql } from '../store/sql.js';
import * as txs from '../store/txs.js';
import * as blocks from '../store/blocks.js';
import * as addresses from '../store/addresses.js';
import * as nonces from '../store/nonces.js';
import { stxLockState, stxLockStateV2 } from '../store/stx-lock.js';
import type { CurrentNonces, StxBalanceParts } from '../views/accounts.js';
import { mempoolTxJson, txJson } from '../views/txs.js';
import { v1BlockJson } from '../views/blocks.js';
import type { TxDbRow } from '../store/txs.js';
import type { BlockDbRow } from '../store/block-columns.js';
import type { ClarityJson } from '../chain/clarity.js';

/** The legacy block of a single lookup (REST and the `block` push message). */
export async function v1SingleBlockJson(sql: Sql, b: BlockDbRow): Promise<Record<string, unknown>> {
  return v1BlockJson(b, await blocks.v1BlockExtras(sql, [b], true), true);
}

/** Lookup order: mined canonical → mempool (incl. pruned) → non-canonical → undefined. */
export async function lookupTx(
  sql: Sql,
  txId: string,
  opts: { max: number; events: txs.EventPage; excludeFunctionArgs: boolean; includeNonCanonical: boolean },
): Promise<Record<string, unknown> | undefined> {
  const mined = await txs.minedTx(sql, txId, opts.max);
  if (mined && mined.canonical && mined.microblock_canonical) {
    const events = await txs.txEvents(sql, mined, opts.events);
    return txJson(mined, { events, excludeFunctionArgs: opts.excludeFunctionArgs });
  }
  const mempool = await txs.mempoolTx(sql, txId);
  if (mempool) return mempoolTxJson(mempool, { excludeFunctionArgs: opts.excludeFunctionArgs });
  if (mined && opts.includeNonCanonical) {
    const events = await txs.txEvents(sql, mined, opts.events);
    return txJson(mined, { events, excludeFunctionArgs: opts.excludeFunctionArgs });
  }
  return undefined;
}

/**
 * lookupTx for many ids at once, without non-canonical placements (what /tx/multiple answers): the best placement
 * of each id within the visible heights is picked in lookupTx's order, from one round trip of reads.
 */
export async function lookupTxsCanonical(
  sql: Sql,
  txIds: string[],
  opts: { unanchored: boolean; events: txs.EventPage },
): Promise<Map<string, Record<string, unknown>>> {
  const { placed, events: eventRows, mempool } = await txs.txsByIds(sql, txIds, opts.events);
  const max = (placed[0]?.tip ?? 0) + (opts.unanchored ? 1 : 0);
  const best = new Map<string, TxDbRow>();
  const rank = (r: TxDbRow) => [r.canonical ? 1 : 0, r.microblock_canonical ? 1 : 0, Number(r.block_height)];
  for (const r of placed) {
    if (r.block_height > max) continue;
    const cur = best.get(r.tx_id);
    if (!cur) {
      best.set(r.tx_id, r);
      continue;
    }
    const [a, b] = [rank(r), rank(cur)];
    if (a[0] > b[0] || (a[0] === b[0] && (a[1] > b[1] || (a[1] === b[1] && a[2] > b[2])))) best.set(r.tx_id, r);
  }
  const out = new Map<string, Record<string, unknown>>();
  for (const r of best.values()) {
    if (!r.canonical || !r.microblock_canonical) continue;
    const events = eventRows
      .filter((e) => e.tx_id === r.tx_id && e.index_block_hash === r.index_block_hash && e.microblock_hash === r.microblock_hash)
      .map((e) => e.api);
    out.set(r.tx_id, txJson(r, { events, excludeFunctionArgs: false }));
  }
  for (const r of mempool) if (!out.has(r.tx_id)) out.set(r.tx_id, mempoolTxJson(r, { excludeFunctionArgs: false }));
  return out;
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
 * (for lock expiry) is `burnHeight`, in parts. `withPending` adds the mempool flows.
 */
export async function stxBalanceParts(
  sql: Sql,
  principal: string,
  height: number,
  burnHeight: number,
  withPending: boolean,
  lockRule: 'v1' | 'v2' = 'v1',
): Promise<StxBalanceParts> {
  const sums =
    (await addresses.maintainedStxSums(sql, principal, height)) ?? (await addresses.historyStxSums(sql, principal, height));
  const received = BigInt(sums.received);
  const sent = BigInt(sums.sent);
  const fees = BigInt(sums.fees);
  const rewards = BigInt(sums.rewards);
  // The lock state: stx_lock events, then the pox-2/3/4 synthetic events (src/store/stx-lock.ts); the v2 balance
  // route's rule counts pox-4 only.
  const lock = await (lockRule === 'v2' ? stxLockStateV2 : stxLockState)(sql, principal, height, burnHeight);
  const parts: StxBalanceParts = { received, sent, fees, rewards, balance: received - sent - fees + rewards, lock };
  if (withPending) {
    const p = await addresses.pendingStxFlows(sql, principal);
    parts.pending = { inbound: BigInt(p.inbound), outbound: BigInt(p.outbound) };
  }
  return parts;
}

/**
 * The STX balance of `principal` as of stacks height `height` (canonical data only), whose burn reference height
 * (for lock expiry) is `burnHeight`. `withPending` adds the mempool flows.
 */
export async function stxBalance(
  sql: Sql,
  principal: string,
  height: number,
  burnHeight: number,
  withPending: boolean,
  lockRule: 'v1' | 'v2' = 'v1',
): Promise<StxBalance> {
  const { balance, sent, received, fees, rewards, lock, pending } = await stxBalanceParts(sql, principal, height, burnHeight, withPending, lockRule);
  const out: StxBalance = { balance: balance.toString() } as StxBalance;
  if (pending) {
    out.estimated_balance = (balance + pending.inbound - pending.outbound).toString();
    out.pending_balance_inbound = pending.inbound.toString();
    out.pending_balance_outbound = pending.outbound.toString();
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

/**
 * One tx as seen by `principal`: the tx plus the principal's STX flows and asset transfers in it (the with_transfers
 * answer; the push layer sends its first four members to `address-transaction:<principal>`).
 */
export async function addressTxWithTransfers(sql: Sql, principal: string, row: addresses.AddressTxRow) {
  return (await addressTxWithTransfersRanked(sql, principal, row)).json;
}

/**
 * addressTxWithTransfers, plus the highest event index among the principal's transfers (−1: none), by which the
 * reference orders txs tied on (height, tx index) in its lists.
 */
export async function addressTxWithTransfersRanked(sql: Sql, principal: string, row: addresses.AddressTxRow) {
  const transfers = await addresses.principalTransfers(sql, principal, row);
  return { json: transferSummary(principal, row, transfers), lastEventIndex: transfers.length ? Math.max(...transfers.map((t) => t.event_index)) : -1 };
}

function transferSummary(principal: string, row: addresses.AddressTxRow, transfers: addresses.TransferRow[]) {
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

/**
 * The highest executed and pending nonce (as origin or as sponsor), the next one to use, and between the two the
 * pending nonces found in the mempool and the missing ones (highest first), as the reference's getAddressNonces.
 */
export async function currentNonces(sql: Sql, principal: string): Promise<CurrentNonces> {
  const m = await nonces.nonceMaxima(sql, principal);
  const both = (a: number | null, b: number | null) => (a === null && b === null ? null : Math.max(a ?? 0, b ?? 0));
  const executed = both(m.executed, m.executed_sponsor);
  const mempool = both(m.mempool, m.mempool_sponsor);
  const next = executed === null && mempool === null ? 0 : Math.max(executed ?? 0, mempool ?? 0) + 1;
  const missing: number[] = [];
  let pending: number[] = [];
  if (executed !== null && mempool !== null && mempool - executed > 1) {
    const expected: number[] = [];
    for (let i = mempool - 1; i > executed; i--) expected.push(i);
    pending = await nonces.pendingNonces(sql, principal, expected);
    for (const n of expected) if (!pending.includes(n)) missing.push(n);
  }
  return {
    last_mempool_tx_nonce: mempool,
    last_executed_tx_nonce: executed,
    possible_next_nonce: next,
    detected_missing_nonces: missing,
    detected_mempool_nonces: pending,
  };
}
