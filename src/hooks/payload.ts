/**
 * Payloads in the shape Chainhook sends for Stacks: `{apply: [block…], rollback: [block…], chainhook: {uuid,
 * predicate, is_streaming_blocks}, delivery_id}`, each block with its `block_identifier {index, hash}` and only the
 * transactions that matched (`transaction_identifier {hash}`, `operations`, `metadata` with the receipt's events).
 * Pure: built from stored rows.
 */
import type { HookBlock, HookEvent, HookTx } from './evaluate.js';
import type { HookPredicate } from './predicate.js';

export interface ChainhookBlock {
  block_identifier: { index: number; hash: string };
  parent_block_identifier: { index: number; hash: string };
  timestamp: number;
  transactions: ChainhookTx[];
  metadata: {
    bitcoin_anchor_block_identifier: { index: number; hash: string };
    stacks_block_hash: string;
    block_time: number;
  };
}

export interface ChainhookTx {
  transaction_identifier: { hash: string };
  operations: unknown[];
  metadata: Record<string, unknown>;
}

function repr(v: unknown): string | undefined {
  const r = (v as { repr?: unknown } | undefined)?.repr;
  return typeof r === 'string' ? r : undefined;
}

const ACTION_NAME: Record<string, string> = { transfer: 'Transfer', mint: 'Mint', burn: 'Burn' };

function chainhookEvent(e: HookEvent, decode: boolean): { type: string; data: Record<string, unknown>; position: { index: number } } {
  const position = { index: e.event_index };
  const action = ACTION_NAME[e.asset_event_type ?? ''] ?? 'Transfer';
  const api = e.api as Record<string, Record<string, unknown> | undefined>;
  switch (e.event_type) {
    case 'smart_contract_log': {
      const value = api.contract_log?.value;
      const data: Record<string, unknown> = { contract_identifier: e.contract_id, topic: e.topic, raw_value: e.value_hex ?? (value as { hex?: string })?.hex };
      if (decode) data.value = repr(value);
      return { type: 'SmartContractEvent', data, position };
    }
    case 'stx_asset':
      return {
        type: `STX${action}Event`,
        data: { sender: e.sender ?? undefined, recipient: e.recipient ?? undefined, amount: e.amount, memo: api.asset?.memo },
        position,
      };
    case 'stx_lock':
      return {
        type: 'STXLockEvent',
        data: { locked_amount: e.amount, unlock_height: e.unlock_height, locked_address: e.locked_address },
        position,
      };
    case 'fungible_token_asset':
      return {
        type: `FT${action}Event`,
        data: { asset_identifier: e.asset_identifier, sender: e.sender || undefined, recipient: e.recipient || undefined, amount: e.amount },
        position,
      };
    case 'non_fungible_token_asset': {
      const value = api.asset?.value;
      const data: Record<string, unknown> = {
        asset_identifier: e.asset_identifier,
        sender: e.sender || undefined,
        recipient: e.recipient || undefined,
        raw_value: e.value_hex ?? (value as { hex?: string })?.hex,
      };
      if (decode) data.value = repr(value);
      return { type: `NFT${action}Event`, data, position };
    }
    default:
      return { type: e.event_type, data: { ...e.api }, position };
  }
}

function kind(tx: HookTx): { type: string; data?: Record<string, unknown> } {
  const api = tx.api as Record<string, Record<string, unknown> | undefined>;
  switch (tx.tx_type) {
    case 'contract_call': {
      const c = api.contract_call ?? {};
      const args = (c.function_args as { repr?: string }[] | undefined) ?? [];
      return { type: 'ContractCall', data: { contract_identifier: tx.contract_call_contract_id, method: c.function_name, args: args.map((a) => a.repr) } };
    }
    case 'smart_contract':
      return { type: 'ContractDeployment', data: { contract_identifier: tx.smart_contract_contract_id } };
    case 'token_transfer':
      return { type: 'NativeTokenTransfer' };
    case 'coinbase':
      return { type: 'Coinbase' };
    case 'tenure_change':
      return { type: 'TenureChange' };
    case 'poison_microblock':
      return { type: 'Unsupported' };
    default:
      return { type: tx.tx_type };
  }
}

export function chainhookTx(tx: HookTx, p: Pick<HookPredicate, 'decode_clarity_values' | 'include_contract_abi'>): ChainhookTx {
  const decode = p.decode_clarity_values ?? false;
  const metadata: Record<string, unknown> = {
    success: tx.status === 'success',
    raw_tx: tx.raw_tx,
    result: decode ? (tx.api as { tx_result?: { repr?: string } }).tx_result?.repr ?? tx.raw_result : tx.raw_result,
    sender: tx.sender_address,
    nonce: Number(tx.nonce),
    fee: Number(tx.fee_rate),
    kind: kind(tx),
    receipt: {
      mutated_contracts_radius: [...new Set(tx.events.map((e) => e.contract_id).filter((c): c is string => !!c))],
      mutated_assets_radius: [...new Set(tx.events.map((e) => e.asset_identifier).filter((c): c is string => !!c))],
      contract_calls_stack: [],
      events: tx.events.map((e) => chainhookEvent(e, decode)),
    },
    description: tx.tx_type,
    position: { index: tx.tx_index },
    proof: null,
  };
  if (p.include_contract_abi && tx.contract_abi) metadata.contract_abi = tx.contract_abi;
  return { transaction_identifier: { hash: tx.tx_id }, operations: [], metadata };
}

/** The block as a hook sees it: only the txs at `txIndexes` (in block order). */
export function chainhookBlock(block: HookBlock, txIndexes: number[], p: HookPredicate): ChainhookBlock {
  return {
    block_identifier: { index: block.block_height, hash: block.index_block_hash },
    parent_block_identifier: { index: Math.max(0, block.block_height - 1), hash: block.parent_index_block_hash },
    timestamp: block.block_time,
    transactions: txIndexes.map((i) => chainhookTx(block.txs[i], p)),
    metadata: {
      bitcoin_anchor_block_identifier: { index: block.burn_block_height, hash: block.burn_block_hash },
      stacks_block_hash: block.block_hash,
      block_time: block.block_time,
    },
  };
}

export interface HookPayload {
  apply: ChainhookBlock[];
  rollback: ChainhookBlock[];
  chainhook: { uuid: string; predicate: HookPredicate['if_this']; is_streaming_blocks: boolean };
  /** the same id on every attempt of this payload: receivers drop a delivery id they have seen */
  delivery_id: string;
}

export function hookPayload(
  d: { id: string; action: 'apply' | 'rollback'; block: ChainhookBlock },
  hook: { uuid: string; predicate: HookPredicate },
  streaming: boolean,
): HookPayload {
  return {
    apply: d.action === 'apply' ? [d.block] : [],
    rollback: d.action === 'rollback' ? [d.block] : [],
    chainhook: { uuid: hook.uuid, predicate: hook.predicate.if_this, is_streaming_blocks: streaming },
    delivery_id: d.id,
  };
}
