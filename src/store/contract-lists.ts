/** Contract lists: deploys implementing a trait, and the deploy status of contract ids. */
import type { Sql } from './sql.js';
import type { ContractRow } from './contracts.js';

/**
 * Canonical deploys whose ABI `functions` contain every trait function (name, access, argument types, outputs; jsonb
 * containment, as the reference matches them), newest first.
 *
 * The reference orders by `block_height DESC` alone, so deploys of one block come in the order PostgreSQL's sort
 * leaves ties, which depends on the order the rows reach it: its table's storage order, i.e. the order the deploys
 * were stored. The same sort (same key, same LIMIT/OFFSET bound) is run here over the deploys in the order they were
 * stored (change sequence, then position in the block), so ties come out as the reference's do.
 *
 * The trait is checked once per distinct function list (contract_function_lists, sql/0108); the matching deploys'
 * keys and heights come from contract_deploys (sql/0113, a narrow table of the canonical deploys) in storage order,
 * and only the page's rows are read whole.
 */
export async function contractsByTrait(
  sql: Sql,
  traitFunctions: unknown[],
  page: { limit: number; offset: number },
): Promise<(ContractRow & { contract_id: string })[]> {
  const lists = (
    await sql<{ functions_md5: string }[]>`
      SELECT functions_md5 FROM contract_function_lists WHERE functions @> ${sql.json(traitFunctions as never)}::jsonb`
  ).map((l) => l.functions_md5);
  if (!lists.length) return [];
  // the deploys of the matching lists from contract_deploys (sql/0113) in storage order: narrow index tuples, no txs
  // row; one list (the usual case: a trait's template) is read in index order without a sort
  const ofLists = lists.length === 1 ? sql`functions_md5 = ${lists[0]}` : sql`functions_md5 = ANY(${lists})`;
  const order = lists.length === 1 ? sql`functions_md5, seq, microblock_sequence, tx_index` : sql`seq, microblock_sequence, tx_index`;
  // the sort's rows carry only the height and the row's place in contract_deploys (its ctid, stable within the
  // statement): 20,000 deploys sort in memory (with the three text keys they spilled to disk); the page's 20 rows
  // are then fetched by ctid
  return sql<(ContractRow & { contract_id: string })[]>`
    WITH stored AS MATERIALIZED (
      SELECT ctid AS c, block_height FROM contract_deploys WHERE ${ofLists} ORDER BY ${order}
    ), page AS (
      SELECT p.c, row_number() OVER () AS i FROM (
        SELECT * FROM stored ORDER BY block_height DESC LIMIT ${page.limit} OFFSET ${page.offset}
      ) p
    )
    SELECT x.tx_id, x.canonical, x.block_height, x.contract_abi, x.api, x.smart_contract_contract_id AS contract_id
    FROM page JOIN contract_deploys d ON d.ctid = page.c
    JOIN txs x ON x.tx_id = d.tx_id AND x.index_block_hash = d.index_block_hash AND x.microblock_hash = d.microblock_hash
    ORDER BY page.i`;
}

export interface ContractStatusRow {
  contract_id: string;
  tx_id: string;
  block_height: number | null;
  status: string;
}

/** Per id: the newest canonical deploy, else the pending deploy with the lowest nonce. */
export async function contractStatuses(sql: Sql, ids: string[]): Promise<ContractStatusRow[]> {
  const mined = await sql<ContractStatusRow[]>`
    SELECT DISTINCT ON (smart_contract_contract_id) smart_contract_contract_id AS contract_id, tx_id, block_height::int, status
    FROM txs
    WHERE tx_type = 'smart_contract' AND smart_contract_contract_id = ANY(${ids}) AND canonical AND microblock_canonical
    ORDER BY smart_contract_contract_id, block_height DESC, microblock_sequence DESC, tx_index DESC, status`;
  const rest = ids.filter((id) => !mined.some((m) => m.contract_id === id));
  if (!rest.length) return mined;
  const pending = await sql<ContractStatusRow[]>`
    SELECT DISTINCT ON (smart_contract_contract_id) smart_contract_contract_id AS contract_id, tx_id, NULL::int AS block_height, status
    FROM mempool_txs
    WHERE tx_id IN (SELECT p.tx_id FROM mempool_pending p WHERE p.smart_contract_contract_id = ANY(${rest}))
      AND tx_type = 'smart_contract'
    ORDER BY smart_contract_contract_id, nonce`;
  return [...mined, ...pending];
}
