/**
 * The chain-heartbeat rooms, built for each stored block with the REST API's own reads and serializers:
 *
 *  - `burn-block`: a burn block, in the `/extended/v2/burn-blocks/{height_or_hash}` shape, whenever the canonical
 *    Stacks blocks it carries change: its first Stacks block (a new burn block), each further one (Nakamoto tenures
 *    put many Stacks blocks in one burn block: `stacks_blocks`, `avg_block_time`, `total_tx_count` grow), and the burn
 *    blocks of the blocks a reorg orphaned or restored (a burn block left with no canonical Stacks block has no REST
 *    answer and gets no message). Oldest burn height first.
 *  - `tenure`: a tenure change: a canonical block (the new block, or one a reorg restored) whose tenure height differs
 *    from its parent's, as `/extended/v2/block-tenures/{tenure_height}/blocks?cursor=<that block>` answers it.
 *
 * A block that is not canonical when stored changes neither. Pre-Nakamoto blocks carry no tenure height: no `tenure`
 * message (every block would be its own tenure).
 */
import type { Sql } from '../store/sql.js';
import type { BlockDbRow } from '../store/block-columns.js';
import { burnBlockJson } from '../views/nakamoto.js';
import { cursorPageBody } from '../views/paging.js';
import { blockV2Json } from '../views/blocks.js';
import { burnBlockByRef } from '../store/burn-blocks.js';
import { tenureBlockPage } from '../store/tenures.js';
import { blockPlacements, tenureHeights } from '../store/blocks.js';
import type { RoomFilter } from './interest.js';
import type { PushMessage } from '../store/push-log.js';
import { rooms } from './topics.js';

const BURN_BLOCK_ROOM = rooms.burnBlock;
const TENURE_ROOM = rooms.tenure;

/** The tenure page a `tenure` message carries (the REST answer's default limit). */
const TENURE_PAGE = 20;

/** The block-tenures REST answer for `tenure` anchored at `cursor` (the route's body, from the same functions). */
export async function tenurePageJson(sql: Sql, tenure: number, cursor: string): Promise<Record<string, unknown>> {
  const q = { limit: TENURE_PAGE, offset: 0 };
  return cursorPageBody(q, await tenureBlockPage(sql, tenure, { ...q, cursor }), (b) => b.index_block_hash, blockV2Json);
}

/**
 * The `burn-block` and `tenure` messages of a stored block `b` (read after the change), given the blocks the change
 * orphaned and restored (index block hashes).
 */
export async function chainHeartbeatMessages(
  sql: Sql,
  b: BlockDbRow,
  moved: { orphaned: string[]; restored: string[] },
  want: RoomFilter,
): Promise<PushMessage[]> {
  if (!b.canonical) return [];
  const meta = { height: b.block_height, index_block_hash: b.index_block_hash };
  const out: PushMessage[] = [];
  const others = [...moved.orphaned, ...moved.restored];
  const touched = others.length
    ? await blockPlacements(sql, others)
    : [];

  if (want.wants(BURN_BLOCK_ROOM)) {
    const burns = new Map<string, number>([[b.burn_block_hash, b.burn_block_height]]);
    for (const t of touched) burns.set(t.burn_block_hash, t.burn_block_height);
    const ordered = [...burns.entries()].sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
    for (const [hash] of ordered) {
      const row = await burnBlockByRef(sql, { hash });
      if (row) out.push({ room: BURN_BLOCK_ROOM, event: BURN_BLOCK_ROOM, args: [burnBlockJson(row)], meta });
    }
  }

  if (want.wants(TENURE_ROOM)) {
    // the canonical blocks this change added: the restored ones, then the new block, lowest first
    const added = [
      ...touched.filter((t) => t.canonical && moved.restored.includes(t.index_block_hash)),
      { index_block_hash: b.index_block_hash, block_height: b.block_height, tenure_height: b.tenure_height, parent_index_block_hash: b.parent_index_block_hash },
    ]
      .filter((t) => t.tenure_height !== null)
      .sort((x, y) => x.block_height - y.block_height);
    if (added.length) {
      const parents = await tenureHeights(sql, added.map((a) => a.parent_index_block_hash));
      const parentTenure = new Map(parents.map((p) => [p.index_block_hash, p.tenure_height]));
      for (const a of added) {
        if (parentTenure.get(a.parent_index_block_hash) === a.tenure_height) continue;
        const page = await tenurePageJson(sql, a.tenure_height!, a.index_block_hash);
        out.push({ room: TENURE_ROOM, event: TENURE_ROOM, args: [page], meta });
      }
    }
  }
  return out;
}
