import type { Sql } from './sql.js';

export interface ChainTip {
  block_height: number;
  block_hash: string;
  index_block_hash: string;
  burn_block_height: number;
}

/** The highest canonical block, or undefined on an empty chain. */
export async function chainTip(sql: Sql): Promise<ChainTip | undefined> {
  const [tip] = await sql<ChainTip[]>`
    SELECT block_height, block_hash, index_block_hash, burn_block_height
    FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1`;
  return tip;
}

/** The newest canonical microblock streamed on top of a block (unconfirmed), if any. */
export async function tipMicroblock(sql: Sql, indexBlockHash: string) {
  const [m] = await sql<{ microblock_hash: string; microblock_sequence: number }[]>`
    SELECT microblock_hash, microblock_sequence FROM microblocks
    WHERE parent_index_block_hash = ${indexBlockHash} AND index_block_hash = '' AND microblock_canonical
    ORDER BY microblock_sequence DESC LIMIT 1`;
  return m;
}
