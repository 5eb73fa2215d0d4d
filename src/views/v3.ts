/**
 * Rows of src/store/principals-v3.ts → the newest reference's /extended/v3 answers (its serializers/v3 at HEAD): tx and
 * mempool summaries, a principal's tx with its STX flows, balance changes, holdings, nonces. Pure functions.
 */
import { codec } from '../chain/native.js';
import { clarityValue } from '../chain/clarity.js';
import type {
  BalanceChangeRow,
  MempoolSummaryRow,
  PrincipalTxV3Row,
  TxSummaryFields,
} from '../store/principals-v3.js';
import type { CurrentNonces, StxBalanceParts } from './accounts.js';

/** The type-specific member of a summary; coinbase / tenure change carry theirs only when mined. */
function typePart(r: TxSummaryFields, mined: boolean): Record<string, unknown> {
  switch (r.tx_type) {
    case 'token_transfer':
      return {
        type: 'token_transfer',
        token_transfer: {
          recipient: r.token_transfer_recipient,
          amount: r.token_transfer_amount,
          memo: r.token_transfer_memo ? { hex: r.token_transfer_memo, repr: codec.memoToString(r.token_transfer_memo) } : null,
        },
      };
    case 'smart_contract':
      return {
        type: 'smart_contract',
        smart_contract: { clarity_version: r.clarity_version, contract_id: r.smart_contract_contract_id },
      };
    case 'contract_call':
      return { type: 'contract_call', contract_call: { contract_id: r.contract_call_contract_id, function_name: r.function_name } };
    case 'poison_microblock':
      return { type: 'poison_microblock' };
    case 'coinbase':
      return mined ? { type: 'coinbase', coinbase: { alt_recipient: r.alt_recipient } } : { type: 'coinbase' };
    case 'tenure_change':
      return mined ? { type: 'tenure_change', tenure_change: { cause: r.tenure_cause } } : { type: 'tenure_change' };
    default:
      throw new Error(`unexpected tx type ${r.tx_type}`);
  }
}

function party(r: TxSummaryFields) {
  return {
    sender: { address: r.sender_address, nonce: Number(r.nonce) },
    sponsor:
      r.sponsored && r.sponsor_address !== null && r.sponsor_nonce !== null
        ? { address: r.sponsor_address, nonce: Number(r.sponsor_nonce) }
        : null,
  };
}

/** A mined tx in short (the reference's TransactionSummary). */
export function txSummaryJson(r: PrincipalTxV3Row): Record<string, unknown> {
  return {
    tx_id: r.tx_id,
    ...party(r),
    fee_rate: r.fee_rate,
    block: {
      height: Number(r.block_height),
      hash: r.block_hash || '0x',
      index_hash: r.index_block_hash || '0x',
      // as the v1 tx: a block without its own time (an unconfirmed microblock tx) shows its burn block's
      time: r.block_time || r.burn_block_time,
      tx_index: r.tx_index,
    },
    bitcoin_block: { height: Number(r.burn_block_height), time: r.burn_block_time },
    status: r.status,
    ...typePart(r, true),
  };
}

/** Roles bits of sql/0040_principal_txs.sql. */
const SENDER = 1;
const SPONSOR = 2;
const RECIPIENT = 4;
const STX_EVENT = 32;
const FT_EVENT = 64;
const NFT_EVENT = 128;

/** A principal's tx: the summary, how the principal takes part, its STX flows (fee it paid included), what it touched. */
export function principalTxJson(r: PrincipalTxV3Row): Record<string, unknown> {
  const roles = r.roles;
  const paysFee = r.sponsored ? (roles & SPONSOR) !== 0 : (roles & SENDER) !== 0;
  const sent = BigInt(r.event_stx_sent) + (paysFee ? BigInt(r.fee_rate) : 0n);
  const received = BigInt(r.event_stx_received);
  return {
    transaction: txSummaryJson(r),
    involvement: roles & SENDER ? 'sender' : roles & SPONSOR ? 'sponsor' : 'affected',
    balance_changes: { stx: { sent: sent.toString(), received: received.toString(), net: (received - sent).toString() } },
    affected_balances: {
      stx: paysFee || (roles & (RECIPIENT | STX_EVENT)) !== 0,
      ft: (roles & FT_EVENT) !== 0,
      nft: (roles & NFT_EVENT) !== 0,
    },
  };
}

/** One asset's balance change in a tx (without the tx id: the per-tx list). */
export function txBalanceChangeJson(r: BalanceChangeRow): Record<string, unknown> {
  const type = r.asset_type === 1 ? 'stx' : r.asset_type === 2 ? 'ft' : 'nft';
  return {
    asset: type === 'stx' ? { type } : { type, identifier: r.asset_identifier },
    balance_change: { sent: r.sent, received: r.received, net: (BigInt(r.received) - BigInt(r.sent)).toString() },
  };
}

/** One asset's balance change with its tx id (the list across txs). */
export function balanceChangeJson(r: BalanceChangeRow): Record<string, unknown> {
  return { tx_id: r.tx_id, ...txBalanceChangeJson(r) };
}

/** The reference's PrincipalStxBalance: total, spendable, the lock, and the pending flows when there are any. */
export function stxBalanceV3Json(b: StxBalanceParts): Record<string, unknown> {
  const locked = BigInt(b.lock.locked);
  const available = b.balance - locked;
  const pending = b.pending ?? { inbound: 0n, outbound: 0n };
  return {
    balance: b.balance.toString(),
    available: available.toString(),
    locked:
      locked > 0n
        ? {
            amount: locked.toString(),
            pox_version: b.lock.pox_version,
            lock_tx_id: b.lock.lock_tx_id,
            stacks_lock_height: b.lock.lock_height,
            burn_lock_height: b.lock.burnchain_lock_height,
            burn_unlock_height: b.lock.burnchain_unlock_height,
          }
        : null,
    mempool:
      pending.inbound > 0n || pending.outbound > 0n
        ? {
            estimated_balance: (available + pending.inbound - pending.outbound).toString(),
            inbound: pending.inbound.toString(),
            outbound: pending.outbound.toString(),
          }
        : null,
  };
}

/** An NFT the principal holds. */
export function nftPositionJson(r: { asset_identifier: string; value_hex: string }): Record<string, unknown> {
  return { asset_identifier: r.asset_identifier, value: clarityValue(r.value_hex) };
}

/** The reference's PrincipalNonces, from the v1 nonces. */
export function noncesV3Json(n: CurrentNonces): Record<string, unknown> {
  return {
    next_nonce: n.possible_next_nonce,
    last_confirmed_nonce: n.last_executed_tx_nonce,
    mempool: {
      last_nonce: n.last_mempool_tx_nonce,
      pending_nonces: n.detected_mempool_nonces,
      missing_nonces: n.detected_missing_nonces,
    },
  };
}

/** A pending tx in short (the reference's MempoolTransactionSummary). */
export function mempoolSummaryJson(r: MempoolSummaryRow): Record<string, unknown> {
  return {
    tx_id: r.tx_id,
    ...party(r),
    fee_rate: r.fee_rate,
    receipt_time: Number(r.receipt_time),
    receipt_block_height: Number(r.receipt_block_height),
    status: r.status,
    ...typePart(r, false),
  };
}
