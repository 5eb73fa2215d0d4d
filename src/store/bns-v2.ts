// BNS-V2 reads (sql/0052_bns_v2.sql): a name's latest canonical operation (gone once burned), its owner the holder of
// its NFT (nft_custody: the latest canonical NFT event of its id, marketplace sales and SIP-09 transfers included),
// else the operation's print.
import type { Sql } from './sql.js';

export interface BnsV2NameRow {
  name: string;
  namespace_id: string;
  contract_id: string;
  nft_id: string;
  op: string;
  owner: string | null;
  registered_at: number | null;
  renewal_height: number | null;
  tx_id: string;
  block_height: number;
}

function currentOf(sql: Sql, latest: ReturnType<Sql>) {
  return sql<BnsV2NameRow[]>`
    SELECT l.name, l.namespace_id, l.contract_id, l.nft_id::text AS nft_id, l.op, l.registered_at::integer AS registered_at,
      l.renewal_height::integer AS renewal_height, l.tx_id, l.block_height::integer AS block_height,
      COALESCE((
        SELECT c.owner FROM nft_custody c
        WHERE c.asset_identifier = l.contract_id || '::BNS-V2'
          AND c.value_hex = '0x01' || lpad(to_hex(l.nft_id::bigint), 32, '0')), l.owner) AS owner
    FROM (${latest}) l
    WHERE l.op <> 'burn-name'
    ORDER BY l.name`;
}

/** The current state of these BNS-V2 names (burned ones left out). */
export async function bnsV2Names(sql: Sql, names: string[]): Promise<BnsV2NameRow[]> {
  if (!names.length) return [];
  return currentOf(
    sql,
    sql`SELECT DISTINCT ON (name) * FROM bns_v2_names WHERE name = ANY(${names})
        ORDER BY name, block_height DESC, tx_index DESC, event_index DESC`,
  );
}

/** The BNS-V2 names an address owns now, by name. */
export async function bnsV2NamesOwnedBy(sql: Sql, address: string): Promise<BnsV2NameRow[]> {
  const candidates = await sql<{ name: string }[]>`
    SELECT DISTINCT name FROM bns_v2_names WHERE owner = ${address}
    UNION
    SELECT DISTINCT n.name FROM bns_v2_names n
    WHERE (n.contract_id, n.nft_id) IN (
      SELECT split_part(c.asset_identifier, '::', 1), (bns_cv(c.value_hex) #>> '{}')::numeric
      FROM nft_custody c
      WHERE c.owner = ${address}
        AND c.asset_identifier IN (SELECT contract_id || '::BNS-V2' FROM bns_v2_contracts))`;
  const rows = await bnsV2Names(sql, candidates.map((r) => r.name));
  return rows.filter((r) => r.owner === address);
}

/** One page of a namespace's current BNS-V2 names, and how many there are. */
export async function bnsV2NamespaceNames(sql: Sql, namespace: string, limit: number, offset: number): Promise<{ total: number; rows: BnsV2NameRow[] }> {
  const names = await sql<{ name: string; total: number }[]>`
    WITH latest AS (
      SELECT DISTINCT ON (name) name, op FROM bns_v2_names WHERE namespace_id = ${namespace}
      ORDER BY name, block_height DESC, tx_index DESC, event_index DESC
    )
    SELECT name, (count(*) OVER ())::integer AS total FROM latest WHERE op <> 'burn-name'
    ORDER BY name LIMIT ${limit} OFFSET ${offset}`;
  let total = names[0]?.total ?? 0;
  if (!names.length && offset > 0) {
    const [c] = await sql<{ total: number }[]>`
      SELECT count(*)::integer AS total FROM (
        SELECT DISTINCT ON (name) op FROM bns_v2_names WHERE namespace_id = ${namespace}
        ORDER BY name, block_height DESC, tx_index DESC, event_index DESC) l
      WHERE op <> 'burn-name'`;
    total = c.total;
  }
  return { total, rows: await bnsV2Names(sql, names.map((r) => r.name)) };
}
