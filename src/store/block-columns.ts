/** The blocks columns a block answer needs. */
import type { BlockRow, ExecutionCost } from '../chain/types.js';

/** The blocks columns the block serializers read (the stored row, see chain/types). */
export type BlockDbRow = Pick<
  BlockRow,
  | 'index_block_hash'
  | 'block_hash'
  | 'block_height'
  | 'block_time'
  | 'burn_block_time'
  | 'burn_block_hash'
  | 'burn_block_height'
  | 'parent_index_block_hash'
  | 'parent_block_hash'
  | 'parent_microblock_hash'
  | 'parent_microblock_sequence'
  | 'miner_txid'
  | 'tenure_height'
  | 'signer_bitvec'
  | 'tx_count'
  | keyof ExecutionCost
  | 'canonical'
>;

/**
 * The columns the block serializers read: block reads name them instead of `SELECT *`, which would also
 * fetch every signer signature of each block (blocks.signer_signatures, sql/0025_nakamoto.sql).
 */
export const BLOCK_COLUMNS = [
  'index_block_hash',
  'block_hash',
  'block_height',
  'block_time',
  'burn_block_time',
  'burn_block_hash',
  'burn_block_height',
  'parent_index_block_hash',
  'parent_block_hash',
  'parent_microblock_hash',
  'parent_microblock_sequence',
  'miner_txid',
  'tenure_height',
  // a Nakamoto block's mark: with no tenure height in the payload, its tenure_height is -1 (src/views/blocks.ts)
  'signer_bitvec',
  'tx_count',
  'execution_cost_read_count',
  'execution_cost_read_length',
  'execution_cost_runtime',
  'execution_cost_write_count',
  'execution_cost_write_length',
  'canonical',
] as const satisfies readonly (keyof BlockDbRow)[];
