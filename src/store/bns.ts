// BNS v1 reads (sql/0050_bns.sql), as the reference's pg-store BNS queries at v8.13.6. A bns_names / bns_namespaces
// row present is a canonical one; zonefiles and subdomains count through the canonical name rows that carry them.
import type { Sql } from './sql.js';
import { unconfirmedNftOwners } from './tokens.js';
import { bnsNameOfKey } from '../chain/bns.js';

const BNS_NAME_ASSETS = ['SP000000000000000000002Q6VF78.bns::names', 'ST000000000000000000002AMW42H.bns::names'];

export interface BnsNameRow {
  name: string;
  address: string;
  registered_at: number;
  expire_block: number;
  zonefile_hash: string;
  status: string;
  tx_id: string;
  zonefile: string;
}

/** `a.b.c` → `b.c` (the name of a subdomain); a name stays itself. */
export function nameOfSubdomain(fqn: string): string {
  return fqn.split('.').slice(-2).join('.');
}

/**
 * The latest canonical row of each of `names` (the operation that decides whether a name is current), read from each
 * name's index one name at a time (DISTINCT ON over every operation of the names sorted them all: 60 ms against 30
 * for 5,930 names).
 */
function latestNameRows(sql: Sql, names: string[]) {
  return sql`
    SELECT latest.* FROM (SELECT DISTINCT unnest(${names}::text[]) AS name) x
    CROSS JOIN LATERAL (
      SELECT n.* FROM bns_names n WHERE n.name = x.name
      ORDER BY n.registered_at DESC, n.microblock_sequence DESC, n.tx_index DESC, n.event_index DESC
      LIMIT 1
    ) latest`;
}

/** The latest canonical operation of each of these names, unless it is a revoke (getNamesAtBlockHeight). */
export async function currentNames(sql: Sql, names: string[]): Promise<BnsNameRow[]> {
  if (!names.length) return [];
  return sql<BnsNameRow[]>`
    WITH latest AS (${latestNameRows(sql, names)})
    SELECT l.name, l.address, l.registered_at::integer AS registered_at, l.expire_block::integer AS expire_block,
      l.zonefile_hash, l.status, l.tx_id,
      COALESCE((SELECT z.zonefile FROM bns_zonefiles z WHERE z.name = l.name AND z.zonefile_hash = l.zonefile_hash
        ORDER BY z.block_height DESC NULLS LAST LIMIT 1), '') AS zonefile
    FROM latest l
    WHERE l.status <> 'name-revoke'`;
}

/** Which of `names` are current (their latest canonical row is not a revoke): currentNames without the records. */
export async function currentNameSet(sql: Sql, names: string[]): Promise<Set<string>> {
  if (!names.length) return new Set();
  const rows = await sql<{ name: string }[]>`
    SELECT name FROM (${latestNameRows(sql, names)}) latest WHERE status <> 'name-revoke'`;
  return new Set(rows.map((r) => r.name));
}

/** One page (100) of the current names, by name (getNamesList). */
export async function namesPage(sql: Sql, page: number): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    WITH latest AS (
      SELECT DISTINCT ON (name) name, status
      FROM bns_names
      ORDER BY name, registered_at DESC, microblock_sequence DESC, tx_index DESC, event_index DESC
    )
    SELECT name FROM latest WHERE status <> 'name-revoke' ORDER BY name LIMIT 100 OFFSET ${page * 100}`;
  return rows.map((r) => r.name);
}

/** The namespaces made ready on the canonical chain. */
export async function namespaceIds(sql: Sql): Promise<string[]> {
  const rows = await sql<{ namespace_id: string }[]>`SELECT DISTINCT namespace_id FROM bns_namespaces ORDER BY namespace_id`;
  return rows.map((r) => r.namespace_id);
}

export async function namespaceExists(sql: Sql, namespace: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM bns_namespaces WHERE namespace_id = ${namespace} LIMIT 1`;
  return rows.length > 0;
}

/** One page (100) of a namespace's names; as the reference, the page is cut before revoked names are left out. */
export async function namespaceNamesPage(sql: Sql, namespace: string, page: number): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    SELECT name FROM (
      SELECT DISTINCT ON (name) name, status
      FROM bns_names
      WHERE namespace_id = ${namespace}
      ORDER BY name, registered_at DESC, microblock_sequence DESC, tx_index DESC, event_index DESC
      LIMIT 100 OFFSET ${page * 100}
    ) l
    WHERE status <> 'name-revoke'
    ORDER BY name`;
  return rows.map((r) => r.name);
}

export interface BnsSubdomainRow {
  fully_qualified_subdomain: string;
  name: string;
  owner: string;
  zonefile_hash: string;
  zonefile: string;
  resolver: string;
  tx_id: string;
}

/**
 * Subdomain rows whose name-update tx is a canonical operation of their name, latest first: the block order of that
 * operation (the reference orders by the attachment's block, microblock and tx).
 */
function canonicalSubdomains(sql: Sql) {
  return sql`
    SELECT s.*, n.registered_at, n.microblock_sequence, n.tx_index
    FROM bns_subdomains s
    JOIN LATERAL (
      SELECT registered_at, microblock_sequence, tx_index FROM bns_names n
      WHERE n.tx_id = s.tx_id AND n.name = s.name
      ORDER BY registered_at DESC LIMIT 1
    ) n ON true`;
}

/** The latest canonical row of a subdomain (getSubdomain), or undefined. */
export async function latestSubdomain(sql: Sql, fqn: string): Promise<BnsSubdomainRow | undefined> {
  const [row] = await sql<BnsSubdomainRow[]>`
    SELECT fully_qualified_subdomain, name, owner, zonefile_hash, zonefile, resolver, tx_id
    FROM (${canonicalSubdomains(sql)}) s
    WHERE fully_qualified_subdomain = ${fqn}
    ORDER BY registered_at DESC, microblock_sequence DESC, tx_index DESC
    LIMIT 1`;
  return row;
}

/** The resolver of a name's latest canonical subdomain row (getSubdomainResolver), or undefined when it has none. */
export async function subdomainResolver(sql: Sql, name: string): Promise<string | undefined> {
  const [row] = await sql<{ resolver: string }[]>`
    SELECT resolver FROM (${canonicalSubdomains(sql)}) s
    WHERE name = ${name}
    ORDER BY registered_at DESC, microblock_sequence DESC, tx_index DESC
    LIMIT 1`;
  return row?.resolver;
}

/** The subdomains of a name (by name). */
export async function subdomainsOf(sql: Sql, name: string): Promise<string[]> {
  const rows = await sql<{ fully_qualified_subdomain: string }[]>`
    SELECT DISTINCT fully_qualified_subdomain FROM (${canonicalSubdomains(sql)}) s
    WHERE name = ${name}
    ORDER BY fully_qualified_subdomain`;
  return rows.map((r) => r.fully_qualified_subdomain);
}

/** The zonefile of a name's latest operation, or of a subdomain's latest row; undefined when there is none. */
export async function latestZonefile(sql: Sql, fqn: string, subdomain: boolean): Promise<string | undefined> {
  if (subdomain) return (await latestSubdomain(sql, fqn))?.zonefile;
  const [row] = await sql<{ zonefile: string }[]>`
    WITH latest AS (
      SELECT name, zonefile_hash FROM bns_names WHERE name = ${fqn}
      ORDER BY registered_at DESC, microblock_sequence DESC, tx_index DESC LIMIT 1
    )
    SELECT COALESCE((SELECT z.zonefile FROM bns_zonefiles z WHERE z.name = l.name AND z.zonefile_hash = l.zonefile_hash
      ORDER BY z.block_height DESC NULLS LAST LIMIT 1), '') AS zonefile
    FROM latest l`;
  return row?.zonefile;
}

/** The zonefile of a name or subdomain with this hash, if a canonical operation / row carried it. */
export async function historicalZonefile(sql: Sql, fqn: string, hash: string, subdomain: boolean): Promise<string | undefined> {
  if (subdomain) {
    const [row] = await sql<{ zonefile: string }[]>`
      SELECT zonefile FROM (${canonicalSubdomains(sql)}) s
      WHERE fully_qualified_subdomain = ${fqn} AND zonefile_hash = ${hash}
      ORDER BY registered_at DESC, microblock_sequence DESC, tx_index DESC
      LIMIT 1`;
    return row?.zonefile;
  }
  const [row] = await sql<{ zonefile: string }[]>`
    SELECT COALESCE((SELECT z.zonefile FROM bns_zonefiles z WHERE z.name = n.name AND z.zonefile_hash = n.zonefile_hash
      ORDER BY z.block_height DESC NULLS LAST LIMIT 1), '') AS zonefile
    FROM bns_names n
    WHERE n.name = ${fqn} AND n.zonefile_hash = ${hash}
    ORDER BY n.registered_at DESC, n.microblock_sequence DESC, n.tx_index DESC
    LIMIT 1`;
  return row?.zonefile;
}

/**
 * What getNamesByAddressList gathers for an address: the subdomains it owns (by name), the names it registered at
 * height 1 and still holds (the reference's test for Stacks 1.0 imports), and the names whose bns::names NFT it holds
 * now (latest canonical NFT event of each name).
 */
export async function namesOwnedBy(sql: Sql, address: string): Promise<{ subdomains: { name: string; fqn: string }[]; names: string[] }> {
  // the subdomains the address owns in some canonical row, then every canonical row of each of them, looked up by
  // its key (a semi join on the fqn scanned every subdomain row: 100 ms at 62,000 rows)
  const subdomains = await sql<{ name: string; fqn: string }[]>`
    WITH mine AS MATERIALIZED (
      SELECT DISTINCT o.fully_qualified_subdomain AS fqn FROM (${canonicalSubdomains(sql)}) o WHERE o.owner = ${address}
    )
    SELECT DISTINCT s.name, s.fully_qualified_subdomain AS fqn
    FROM mine m CROSS JOIN LATERAL (
      SELECT x.name, x.fully_qualified_subdomain FROM bns_subdomains x
      WHERE x.fully_qualified_subdomain = m.fqn
        AND EXISTS (SELECT 1 FROM bns_names n WHERE n.tx_id = x.tx_id AND n.name = x.name)
    ) s
    ORDER BY fqn`;
  // The names whose bns::names NFT the address holds, read from NFT custody as the reference reads its nft_custody
  // table (sql/0106: an owner written by a block that was orphaned since stays), with the unconfirmed microblock
  // stream's owners over it (the reference's table takes them as they arrive); and the names it registered at height
  // 1 (imports) unless custody names another owner (an NFT burnt, owner NULL, does not count, as there).
  const held = await sql<{ value_hex: string | null; name: string | null }[]>`
    WITH mb AS MATERIALIZED (
      SELECT * FROM (${unconfirmedNftOwners(sql)}) u WHERE u.asset_identifier = ANY(${BNS_NAME_ASSETS})
    ), mine AS (
      SELECT c.value_hex FROM nft_custody c
      WHERE c.owner = ${address} AND c.asset_identifier = ANY(${BNS_NAME_ASSETS})
        AND NOT EXISTS (SELECT 1 FROM mb WHERE mb.asset_identifier = c.asset_identifier AND mb.value_hex = c.value_hex)
      UNION
      SELECT value_hex FROM mb WHERE owner = ${address}
    )
    -- the keys are decoded below, in TypeScript with the native Clarity decoder (in plpgsql, bns_cv took 20 µs a
    -- name: 120 ms for a principal holding 6,000 names)
    SELECT value_hex, NULL::text AS name FROM mine
    UNION ALL
    SELECT NULL, n.name FROM bns_names n
    WHERE n.address = ${address} AND n.registered_at = 1
      AND NOT EXISTS (
        SELECT 1 FROM (
          SELECT c.owner FROM nft_custody c
          WHERE c.asset_identifier = ANY(${BNS_NAME_ASSETS})
            AND c.value_hex = bns_name_cv(split_part(n.name, '.', 1), split_part(n.name, '.', 2))
            AND NOT EXISTS (SELECT 1 FROM mb WHERE mb.asset_identifier = c.asset_identifier AND mb.value_hex = c.value_hex)
          UNION ALL
          SELECT owner FROM mb WHERE mb.value_hex = bns_name_cv(split_part(n.name, '.', 1), split_part(n.name, '.', 2))
        ) c WHERE c.owner <> ${address})`;
  const names = new Set<string>();
  for (const r of held) {
    const name = r.value_hex === null ? r.name : bnsNameOfKey(r.value_hex);
    if (name !== null) names.add(name);
  }
  return { subdomains, names: [...names] };
}

/**
 * The names a BNS (v1 or V2) operation of these blocks touches (their print events and print-less renewal calls), whether the
 * blocks are canonical or not: what the `bns-name:<fqn>` push rooms recheck when blocks become or stop being canonical.
 */
export async function bnsNamesTouched(sql: Sql, blocks: string[]): Promise<string[]> {
  if (!blocks.length) return [];
  const rows = await sql<{ name: string }[]>`
    SELECT DISTINCT name FROM (
      SELECT bns_utf8(v->'attachment'->'metadata'->>'name') || '.' || bns_utf8(v->'attachment'->'metadata'->>'namespace') AS name
      FROM (
        SELECT bns_cv(value_hex) AS v FROM events
        WHERE index_block_hash = ANY(${blocks}) AND event_type = 'smart_contract_log' AND topic = 'print'
          AND contract_id IN ('SP000000000000000000002Q6VF78.bns', 'ST000000000000000000002AMW42H.bns')
      ) p
      UNION ALL
      SELECT bns_utf8(bns_cv(api->'contract_call'->'function_args'->1->>'hex') #>> '{}') || '.'
        || bns_utf8(bns_cv(api->'contract_call'->'function_args'->0->>'hex') #>> '{}')
      FROM txs
      WHERE index_block_hash = ANY(${blocks}) AND status = 'success'
        AND contract_call_contract_id IN ('SP000000000000000000002Q6VF78.bns', 'ST000000000000000000002AMW42H.bns')
        AND api->'contract_call'->>'function_name' = 'name-renewal'
      UNION ALL
      -- BNS-V2 operations (sql/0052_bns_v2.sql)
      SELECT bns_utf8(v->'name'->>'name') || '.' || bns_utf8(v->'name'->>'namespace')
      FROM (
        SELECT bns_cv(value_hex) AS v FROM events
        WHERE index_block_hash = ANY(${blocks}) AND event_type = 'smart_contract_log' AND topic = 'print'
          AND contract_id IN (SELECT contract_id FROM bns_v2_contracts)
      ) p2
      WHERE jsonb_typeof(v) = 'object' AND v ? 'name' AND v ? 'topic'
    ) x
    WHERE name IS NOT NULL
    ORDER BY name`;
  return rows.map((r) => r.name);
}
