/**
 * Validated node messages → ChainUpdate (plain rows). Pure: no I/O; decoding through the native codec.
 * Block-dependent values (canonical flags) are defaults here; the store sets them from chain state.
 */
import { decodeTx, type DecodedTx } from '../chain/tx.js';
import { burnchainOpTx, isBurnchainOpRawTx, type BurnOpNodeEvent } from '../chain/burnchain-op.js';
import { txEventsFromNode, type ChainEvent, type NodeEvent } from '../chain/events.js';
import { normalizeHex } from '../chain/clarity.js';
import type {
  ChainUpdate,
  EventRow,
  ExecutionCost,
  MempoolTxRow,
  MinerRewardRow,
  TxRow,
} from '../chain/types.js';
import type {
  BlockTransaction,
  DropMempoolTxMessage,
  MicroblockTransaction,
  NewBlockMessage,
  NewBurnBlockMessage,
  NewMicroblocksMessage,
  NewMempoolTxMessage,
  ObserverValidationOk,
} from './schemas.js';
import { PulseError } from '../errors.js';

/** Microblock sequence the reference shows for txs of an anchored block. */
export const ANCHORED_MICROBLOCK_SEQUENCE = 2147483647;
const ZERO_HASH = '0x' + '0'.repeat(64);

export class MessageDecodeError extends PulseError {}

function cost(c: { read_count: number; read_length: number; runtime: number; write_count: number; write_length: number }): ExecutionCost {
  return {
    execution_cost_read_count: c.read_count,
    execution_cost_read_length: c.read_length,
    execution_cost_runtime: c.runtime,
    execution_cost_write_count: c.write_count,
    execution_cost_write_length: c.write_length,
  };
}

const ZERO_COST = cost({ read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 });

function decodeOrThrow(raw: string, where: string): DecodedTx {
  try {
    return decodeTx(raw);
  } catch (err) {
    throw new MessageDecodeError(`${where}: cannot decode transaction: ${(err as Error).message}`);
  }
}

/** The columns txs and mempool_txs share, from a decoded transaction. */
function decodedColumns(d: DecodedTx) {
  return {
    raw_tx: d.rawTx,
    tx_type: d.txType,
    nonce: d.nonce,
    fee_rate: d.feeRate,
    sender_address: d.senderAddress,
    sponsor_address: d.sponsorAddress,
    sponsored: d.sponsored,
    token_transfer_recipient: d.tokenTransferRecipient,
    token_transfer_amount: d.tokenTransferAmount,
    contract_call_contract_id: d.contractCallContractId,
    smart_contract_contract_id: d.smartContractContractId,
  };
}

type MicroblockRef = { microblock_hash: string; microblock_sequence: number; microblock_parent_hash: string; tx_count: number };

/** The microblocks named by a list of txs (those carrying a microblock hash), with their tx counts. */
function groupMicroblocks(txs: readonly TxRow[]): MicroblockRef[] {
  const byHash = new Map<string, MicroblockRef>();
  for (const t of txs) {
    if (!t.microblock_hash) continue;
    const m = byHash.get(t.microblock_hash);
    if (m) m.tx_count++;
    else
      byHash.set(t.microblock_hash, {
        microblock_hash: t.microblock_hash,
        microblock_sequence: t.microblock_sequence,
        microblock_parent_hash: t.microblock_parent_hash,
        tx_count: 1,
      });
  }
  return [...byHash.values()];
}

interface TxPlacement {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  parent_burn_block_time: number;
  parent_block_hash: string;
  parent_index_block_hash: string;
  canonical: boolean;
}

function txRow(
  t: BlockTransaction | MicroblockTransaction,
  index: number,
  events: ChainEvent[],
  placement: TxPlacement,
  where: string,
  messageEvents: readonly unknown[],
): TxRow | null {
  let d: DecodedTx;
  if (isBurnchainOpRawTx(t.raw_tx)) {
    // a Bitcoin-originated STX operation: rebuilt from its events / burnchain_op; skipped (as the reference) when
    // there is nothing to rebuild it from
    const synthetic = burnchainOpTx({
      txid: t.txid,
      raw_result: t.raw_result,
      burnchain_op: t.burnchain_op,
      burnBlockHeight: placement.burn_block_height,
      events: messageEvents as BurnOpNodeEvent[],
    });
    if (!synthetic) return null;
    d = synthetic;
  } else d = decodeOrThrow(t.raw_tx, `${where}/transactions/${index}/raw_tx`);
  if (d.txId !== normalizeHex(t.txid)) {
    throw new MessageDecodeError(`${where}/transactions/${index}/txid: does not match the id of raw_tx (${d.txId})`);
  }
  // the reference reads only `contract_abi` (newer nodes also send `contract_interface`, which it ignores)
  const abi = t.contract_abi ?? null;
  return {
    tx_id: d.txId,
    ...placement,
    microblock_hash: t.microblock_hash ? normalizeHex(t.microblock_hash) : '',
    microblock_sequence: t.microblock_sequence ?? ANCHORED_MICROBLOCK_SEQUENCE,
    microblock_parent_hash: t.microblock_parent_hash ? normalizeHex(t.microblock_parent_hash) : '',
    tx_index: t.tx_index,
    ...decodedColumns(d),
    status: t.status,
    raw_result: normalizeHex(t.raw_result),
    // NUL cannot be stored in text; the reference strips it too
    vm_error: t.vm_error == null ? null : t.vm_error.replace(/\u0000/g, ''),
    event_count: events.length,
    ...(t.execution_cost ? cost(t.execution_cost) : ZERO_COST),
    contract_abi: abi,
    api: d.api as unknown as Record<string, unknown>,
    microblock_canonical: true,
  };
}

function eventRows(tx: TxRow, events: ChainEvent[]): EventRow[] {
  return events.map((e) => ({
    tx_id: tx.tx_id,
    index_block_hash: tx.index_block_hash,
    microblock_hash: tx.microblock_hash,
    event_index: e.eventIndex,
    block_event_index: e.nodeEventIndex,
    tx_index: tx.tx_index,
    block_height: tx.block_height,
    event_type: e.eventType,
    asset_event_type: e.assetEventType,
    sender: e.sender,
    recipient: e.recipient,
    amount: e.amount,
    asset_identifier: e.assetIdentifier,
    value_hex: e.valueHex,
    contract_id: e.contractId,
    topic: e.topic,
    locked_address: e.lockedAddress,
    unlock_height: e.unlockHeight,
    api: e.api as unknown as Record<string, unknown>,
    canonical: tx.canonical,
    microblock_canonical: tx.microblock_canonical,
  }));
}

function eventsByTx(
  events: NewBlockMessage['events'] | NewMicroblocksMessage['events'],
  txs: readonly (BlockTransaction | MicroblockTransaction)[],
): Map<string, ChainEvent[]> {
  const success = new Map(txs.map((t) => [normalizeHex(t.txid), t.status === 'success']));
  return txEventsFromNode(events as unknown as NodeEvent[], (id) => success.get(id) ?? false);
}

function nextRewardIndex(seen: Map<string, number>, key: string): number {
  const n = seen.get(key) ?? 0;
  seen.set(key, n + 1);
  return n;
}

export function blockUpdate(msg: NewBlockMessage): ChainUpdate {
  const index_block_hash = normalizeHex(msg.index_block_hash);
  const block_time = msg.block_time ?? msg.burn_block_time;
  const placement: TxPlacement = {
    index_block_hash,
    block_hash: normalizeHex(msg.block_hash),
    block_height: msg.block_height,
    block_time,
    burn_block_time: msg.burn_block_time,
    burn_block_height: msg.burn_block_height,
    parent_burn_block_time: msg.parent_burn_block_timestamp,
    parent_block_hash: normalizeHex(msg.parent_block_hash),
    parent_index_block_hash: normalizeHex(msg.parent_index_block_hash),
    canonical: true,
  };
  const byTx = eventsByTx(msg.events, msg.transactions);
  const txs = msg.transactions
    .map((t, i) => txRow(t, i, byTx.get(normalizeHex(t.txid)) ?? [], placement, 'body', msg.events))
    .filter((t): t is TxRow => t !== null);
  const events = txs.flatMap((t) => eventRows(t, byTx.get(t.tx_id) ?? []));

  const microblocks = groupMicroblocks(txs);

  const rewardSeen = new Map<string, number>();
  const minerRewards: MinerRewardRow[] = msg.matured_miner_rewards.map((r) => ({
    index_block_hash,
    // the node names the rewarded block by consensus hash + block hash; keep both in one key
    from_index_block_hash: `${normalizeHex(r.from_index_consensus_hash)}:${normalizeHex(r.from_stacks_block_hash)}`,
    // a second reward for the same recipient from the same block (coinbase, then microblock fees) is its own row
    reward_index: nextRewardIndex(rewardSeen, `${r.recipient}|${normalizeHex(r.from_index_consensus_hash)}:${normalizeHex(r.from_stacks_block_hash)}`),
    recipient: r.recipient,
    block_height: msg.block_height,
    coinbase_amount: r.coinbase_amount,
    tx_fees_anchored: r.tx_fees_anchored,
    tx_fees_streamed_confirmed: r.tx_fees_streamed_confirmed,
    tx_fees_streamed_produced: r.tx_fees_streamed_produced,
    canonical: true,
  }));

  const parentMicroblock = normalizeHex(msg.parent_microblock);
  // The block's cost is the node's own `anchored_cost` (the anchored txs only; microblock-confirmed txs are
  // counted in `confirmed_microblocks_cost`, which the reference does not show). Very old nodes do not send it:
  // then, as the reference does, the sum of the costs of every tx of the message.
  const blockCost = msg.anchored_cost ? cost(msg.anchored_cost) : { ...ZERO_COST };
  if (!msg.anchored_cost) {
    for (const t of txs) {
      blockCost.execution_cost_read_count += t.execution_cost_read_count;
      blockCost.execution_cost_read_length += t.execution_cost_read_length;
      blockCost.execution_cost_runtime += t.execution_cost_runtime;
      blockCost.execution_cost_write_count += t.execution_cost_write_count;
      blockCost.execution_cost_write_length += t.execution_cost_write_length;
    }
  }
  return {
    kind: 'block',
    block: {
      index_block_hash,
      block_hash: placement.block_hash,
      block_height: msg.block_height,
      block_time,
      burn_block_time: msg.burn_block_time,
      burn_block_hash: normalizeHex(msg.burn_block_hash),
      burn_block_height: msg.burn_block_height,
      parent_index_block_hash: placement.parent_index_block_hash,
      parent_block_hash: placement.parent_block_hash,
      parent_microblock_hash: parentMicroblock === ZERO_HASH ? '' : parentMicroblock,
      parent_microblock_sequence: parentMicroblock === ZERO_HASH ? -1 : msg.parent_microblock_sequence,
      parent_burn_block_time: msg.parent_burn_block_timestamp,
      parent_burn_block_hash: normalizeHex(msg.parent_burn_block_hash),
      parent_burn_block_height: msg.parent_burn_block_height,
      miner_txid: normalizeHex(msg.miner_txid),
      consensus_hash: msg.consensus_hash ? normalizeHex(msg.consensus_hash) : '',
      tenure_height: msg.tenure_height ?? null,
      cycle_number: msg.cycle_number ?? null,
      // the reference stores no bitvec for an empty one (it reads `tenure_height` -1 only when a bitvec is present)
      signer_bitvec: msg.signer_bitvec ? msg.signer_bitvec : null,
      signer_signature_hash: msg.signer_signature_hash ? normalizeHex(msg.signer_signature_hash) : null,
      signer_signatures: msg.signer_signature?.map(normalizeHex) ?? null,
      // the reference counts every tx of the message, including a burnchain-op tx it could not rebuild
      tx_count: msg.transactions.length,
      ...blockCost,
      canonical: true,
    },
    txs,
    events,
    minerRewards,
    confirmedMicroblocks: microblocks,
    pox: {
      pox_v1_unlock_height: msg.pox_v1_unlock_height ?? null,
      pox_v2_unlock_height: msg.pox_v2_unlock_height ?? null,
      pox_v3_unlock_height: msg.pox_v3_unlock_height ?? null,
    },
  };
}

export function microblocksUpdate(msg: NewMicroblocksMessage): ChainUpdate {
  const parent = normalizeHex(msg.parent_index_block_hash);
  // block-dependent fields (height, parent block hash) are filled by the store from the parent block
  const placement: TxPlacement = {
    index_block_hash: '',
    block_hash: '',
    block_height: -1,
    block_time: 0,
    burn_block_time: -1,
    burn_block_height: -1,
    parent_burn_block_time: msg.burn_block_timestamp,
    parent_block_hash: '',
    parent_index_block_hash: parent,
    canonical: true,
  };
  const byTx = eventsByTx(msg.events, msg.transactions);
  const txs = msg.transactions
    .map((t, i) => txRow(t, i, byTx.get(normalizeHex(t.txid)) ?? [], placement, 'body', msg.events))
    .filter((t): t is TxRow => t !== null);
  const events = txs.flatMap((t) => eventRows(t, byTx.get(t.tx_id) ?? []));
  const microblocks = groupMicroblocks(txs);
  return {
    kind: 'microblocks',
    parentIndexBlockHash: parent,
    burnBlockHash: normalizeHex(msg.burn_block_hash),
    burnBlockHeight: msg.burn_block_height,
    burnBlockTime: msg.burn_block_timestamp,
    microblocks,
    txs,
    events,
  };
}

export function burnBlockUpdate(msg: NewBurnBlockMessage): ChainUpdate {
  return {
    kind: 'burn_block',
    burnBlock: {
      burn_block_hash: normalizeHex(msg.burn_block_hash),
      burn_block_height: msg.burn_block_height,
      parent_burn_block_hash: msg.parent_burn_block_hash ? normalizeHex(msg.parent_burn_block_hash) : '',
      consensus_hash: msg.consensus_hash ? normalizeHex(msg.consensus_hash) : '',
      burn_amount: String(msg.burn_amount),
      reward_recipients: msg.reward_recipients,
      reward_slot_holders: msg.reward_slot_holders,
    },
  };
}

export function mempoolUpdate(msg: NewMempoolTxMessage, receiptTime: number): ChainUpdate {
  const txs: MempoolTxRow[] = msg.map((raw, i) => {
    const d = decodeOrThrow(raw, `body/${i}`);
    return {
      tx_id: d.txId,
      ...decodedColumns(d),
      byte_size: d.byteSize,
      api: d.api as unknown as Record<string, unknown>,
      receipt_time: receiptTime,
    };
  });
  return { kind: 'mempool', txs };
}

export function dropMempoolUpdate(msg: DropMempoolTxMessage): ChainUpdate {
  return {
    kind: 'drop_mempool',
    txIds: msg.dropped_txids.map(normalizeHex),
    reason: msg.reason,
    newTxId: msg.new_txid ? normalizeHex(msg.new_txid) : null,
  };
}

/** The ChainUpdate of one validated message. Throws MessageDecodeError when a raw tx does not decode. */
export function messageToUpdate(m: ObserverValidationOk, receiptTime: number): ChainUpdate {
  switch (m.path) {
    case '/new_block':
      return blockUpdate(m.message);
    case '/new_burn_block':
      return burnBlockUpdate(m.message);
    case '/new_microblocks':
      return microblocksUpdate(m.message);
    case '/new_mempool_tx':
      return mempoolUpdate(m.message, receiptTime);
    case '/drop_mempool_tx':
      return dropMempoolUpdate(m.message);
    default:
      return { kind: 'raw' };
  }
}
