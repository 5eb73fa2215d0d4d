/**
 * Domain rows produced from node messages. Keys are the database column names so the store can insert them
 * as they are (jsonb_populate_recordset); values are plain JSON (amounts as decimal strings).
 */

export interface ExecutionCost {
  execution_cost_read_count: number;
  execution_cost_read_length: number;
  execution_cost_runtime: number;
  execution_cost_write_count: number;
  execution_cost_write_length: number;
}

export interface BlockRow extends ExecutionCost {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_hash: string;
  burn_block_height: number;
  parent_index_block_hash: string;
  parent_block_hash: string;
  parent_microblock_hash: string;
  parent_microblock_sequence: number;
  parent_burn_block_time: number;
  parent_burn_block_hash: string;
  parent_burn_block_height: number;
  miner_txid: string;
  consensus_hash: string;
  tenure_height: number | null;
  cycle_number: number | null;
  signer_bitvec: string | null;
  signer_signature_hash: string | null;
  /** the node's `signer_signature` list (0x lower-case hex), null before Nakamoto (sql/0025_nakamoto.sql) */
  signer_signatures: string[] | null;
  tx_count: number;
  canonical: boolean;
}

export interface TxRow extends ExecutionCost {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  burn_block_time: number;
  burn_block_height: number;
  parent_burn_block_time: number;
  parent_block_hash: string;
  parent_index_block_hash: string;
  tx_index: number;
  microblock_sequence: number;
  microblock_parent_hash: string;
  raw_tx: string;
  tx_type: string;
  nonce: number;
  fee_rate: string;
  sender_address: string;
  sponsor_address: string | null;
  sponsored: boolean;
  token_transfer_recipient: string | null;
  token_transfer_amount: string | null;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
  status: string;
  raw_result: string;
  vm_error: string | null;
  event_count: number;
  contract_abi: unknown | null;
  api: Record<string, unknown>;
  canonical: boolean;
  microblock_canonical: boolean;
}

export interface EventRow {
  tx_id: string;
  index_block_hash: string;
  microblock_hash: string;
  event_index: number;
  block_event_index: number;
  tx_index: number;
  block_height: number;
  event_type: string;
  asset_event_type: string | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  asset_identifier: string | null;
  value_hex: string | null;
  contract_id: string | null;
  topic: string | null;
  locked_address: string | null;
  unlock_height: number | null;
  api: Record<string, unknown>;
  canonical: boolean;
  microblock_canonical: boolean;
}

export interface MicroblockRow {
  microblock_hash: string;
  index_block_hash: string;
  microblock_sequence: number;
  microblock_parent_hash: string;
  parent_index_block_hash: string;
  block_height: number;
  block_hash: string;
  parent_burn_block_height: number;
  parent_burn_block_hash: string;
  parent_burn_block_time: number;
  block_time: number;
  tx_count: number;
  microblock_canonical: boolean;
  canonical: boolean;
}

export interface MinerRewardRow {
  index_block_hash: string;
  from_index_block_hash: string;
  recipient: string;
  block_height: number;
  coinbase_amount: string;
  tx_fees_anchored: string;
  tx_fees_streamed_confirmed: string;
  tx_fees_streamed_produced: string;
  canonical: boolean;
  /** 0, 1, … among the rewards of one block that share recipient and rewarded block (sql/0060_miner_reward_index.sql) */
  reward_index: number;
}

export interface BurnBlockRow {
  burn_block_hash: string;
  burn_block_height: number;
  parent_burn_block_hash: string;
  consensus_hash: string;
  burn_amount: string;
  reward_recipients: unknown;
  reward_slot_holders: unknown;
}

export interface MempoolTxRow {
  tx_id: string;
  raw_tx: string;
  tx_type: string;
  nonce: number;
  fee_rate: string;
  sender_address: string;
  sponsor_address: string | null;
  sponsored: boolean;
  token_transfer_recipient: string | null;
  token_transfer_amount: string | null;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
  byte_size: number;
  api: Record<string, unknown>;
  receipt_time: number;
}

export interface PoxUnlockHeights {
  pox_v1_unlock_height: number | null;
  pox_v2_unlock_height: number | null;
  pox_v3_unlock_height: number | null;
}

export type ChainUpdate =
  | {
      kind: 'block';
      block: BlockRow;
      txs: TxRow[];
      events: EventRow[];
      minerRewards: MinerRewardRow[];
      /** microblocks of the parent's stream that this block confirms (from its tx list) */
      confirmedMicroblocks: { microblock_hash: string; microblock_sequence: number; microblock_parent_hash: string; tx_count: number }[];
      pox: PoxUnlockHeights;
    }
  | { kind: 'burn_block'; burnBlock: BurnBlockRow }
  | { kind: 'mempool'; txs: MempoolTxRow[] }
  | { kind: 'drop_mempool'; txIds: string[]; reason: string; newTxId: string | null }
  | {
      kind: 'microblocks';
      parentIndexBlockHash: string;
      burnBlockHash: string;
      burnBlockHeight: number;
      burnBlockTime: number;
      microblocks: { microblock_hash: string; microblock_sequence: number; microblock_parent_hash: string; tx_count: number }[];
      /** rows with index_block_hash '' and block-dependent fields filled at write time */
      txs: TxRow[];
      events: EventRow[];
    }
  | { kind: 'raw' };

/**
 * Whether subscribers can see this change: burn blocks and raw messages push nothing (no room carries them), so the
 * push layer skips its outbox row, snapshot and publication for them.
 */
export function isPushable(u: ChainUpdate): boolean {
  return u.kind !== 'burn_block' && u.kind !== 'raw';
}
