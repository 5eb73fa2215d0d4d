/**
 * Database rows → the reference API's JSON. Pure functions, no I/O: every REST route and every push message uses these,
 * so one object always has one shape.
 */
import { withContractAbi } from '../chain/contract-call.js';
import { clarityValue } from '../chain/clarity.js';
import type { TxStaticJson } from '../chain/tx.js';
import type { MempoolDbRow, TxDbRow } from '../store/txs.js';

/** ISO string of unix seconds, as the reference prints it ("" for non-positive times where it does). */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function isoIfPositive(seconds: number): string {
  return seconds > 0 ? isoTime(seconds) : '';
}

export interface TxJsonOptions {
  /** events to embed (tx lookups); omitted → [] */
  events?: unknown[];
  excludeFunctionArgs?: boolean;
}

/** Splits the static JSON into the fields before and after the block placement (the reference's key order). */
function staticParts(api: TxStaticJson, abi: unknown, excludeFunctionArgs?: boolean) {
  // only a contract call changes (its ABI joined in); anything else is read as stored, without a copy
  const full = (api.contract_call ? withContractAbi(api, abi as never, { excludeFunctionArgs }) : api) as unknown as Record<string, unknown>;
  const head: Record<string, unknown> = {};
  const tail: Record<string, unknown> = {};
  for (const k in full) {
    if (k === 'tx_type' || TYPE_PAYLOAD_KEYS[k] === true) tail[k] = full[k];
    else head[k] = full[k];
  }
  return { head, tail };
}

const TYPE_PAYLOAD_KEYS: Record<string, true | undefined> = {
  token_transfer: true,
  smart_contract: true,
  contract_call: true,
  poison_microblock: true,
  coinbase_payload: true,
  tenure_change_payload: true,
};

/**
 * An event as `/extended/v1/address/{principal}/assets` prints it. The reference (v8.13.6) reads that list's STX lock
 * rows through a helper that returns `true` instead of the value, so every lock event there says
 * `locked_amount: "1"` and `unlock_height: 1` (its `getAddressAssetEvents`); the same event is printed with its real
 * values everywhere else (`/tx/{id}`, `/tx/events`). Applied here so the list answers as the reference does.
 */
export function addressAssetEventJson(event: unknown): unknown {
  const api = event as Record<string, unknown>;
  if (!api || api.event_type !== 'stx_lock' || typeof api.stx_lock_event !== 'object' || api.stx_lock_event === null) return api;
  return { ...api, stx_lock_event: { ...(api.stx_lock_event as Record<string, unknown>), locked_amount: '1', unlock_height: 1 } };
}

/** A mined transaction (confirmed form; also unanchored microblock txs). */
export function txJson(row: TxDbRow, opts: TxJsonOptions = {}): Record<string, unknown> {
  const { head, tail } = staticParts(row.api, row.abi, opts.excludeFunctionArgs);
  const blockTime = row.block_time || row.burn_block_time;
  const blockHash = row.block_hash || '0x';
  return {
    ...head,
    block_hash: blockHash,
    block_height: row.block_height,
    block_time: blockTime,
    block_time_iso: blockTime ? isoTime(blockTime) : isoIfPositive(row.burn_block_time),
    burn_block_time: row.burn_block_time,
    burn_block_height: row.burn_block_height,
    burn_block_time_iso: isoIfPositive(row.burn_block_time),
    parent_burn_block_time: row.parent_burn_block_time,
    parent_burn_block_time_iso: isoIfPositive(row.parent_burn_block_time),
    canonical: row.canonical,
    tx_index: row.tx_index,
    tx_status: row.status,
    tx_result: clarityValue(row.raw_result),
    event_count: row.event_count,
    parent_block_hash: row.parent_block_hash,
    is_unanchored: blockHash === '0x',
    microblock_hash: row.microblock_hash || '0x',
    microblock_sequence: row.microblock_sequence,
    microblock_canonical: row.microblock_canonical,
    execution_cost_read_count: row.execution_cost_read_count,
    execution_cost_read_length: row.execution_cost_read_length,
    execution_cost_runtime: row.execution_cost_runtime,
    execution_cost_write_count: row.execution_cost_write_count,
    execution_cost_write_length: row.execution_cost_write_length,
    vm_error: row.vm_error,
    events: opts.events ?? [],
    ...tail,
  };
}

/** A mempool transaction (pending, or dropped with its status). */
export function mempoolTxJson(row: MempoolDbRow, opts: { excludeFunctionArgs?: boolean; status?: string } = {}): Record<string, unknown> {
  const { head, tail } = staticParts(row.api, row.abi, opts.excludeFunctionArgs);
  return {
    ...head,
    tx_status: opts.status ?? row.status,
    replaced_by_tx_id: row.replaced_by_tx_id,
    receipt_time: row.receipt_time,
    receipt_time_iso: isoTime(row.receipt_time),
    ...tail,
  };
}
