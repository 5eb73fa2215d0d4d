// BNS writes outside the derived hook: the zonefiles and subdomains of `/attachments/new` (sql/0050_bns.sql), written
// in the transaction that logs the message, and the subdomains of attachments the migration backfilled from event_log
// (zone files are parsed here, in TypeScript, with the `zone-file` package as the reference does).
import type { Sql } from './sql.js';
import { bnsSubdomainRows, bnsZonefileRows, type BnsSubdomainRow, type BnsZonefileRow } from '../chain/bns.js';

async function insertZonefiles(tx: Sql, rows: BnsZonefileRow[]): Promise<void> {
  // one row per key (a message may repeat an attachment): the last wins, as the reference's upserts in order
  const byKey = new Map(rows.map((r) => [`${r.name}\n${r.zonefile_hash}\n${r.tx_id}\n${r.index_block_hash}`, r]));
  if (!byKey.size) return;
  await tx`
    INSERT INTO bns_zonefiles (name, zonefile_hash, zonefile, op, tx_id, index_block_hash, block_height, attachment_index)
    SELECT r.name, r.zonefile_hash, r.zonefile, r.op, r.tx_id, r.index_block_hash, r.block_height, r.attachment_index
    FROM json_to_recordset(${JSON.stringify([...byKey.values()])}::text::json) AS r(name text, zonefile_hash text,
      zonefile text, op text, tx_id text, index_block_hash text, block_height bigint, attachment_index bigint)
    ON CONFLICT (name, zonefile_hash, tx_id, index_block_hash) DO UPDATE SET zonefile = EXCLUDED.zonefile`;
}

async function insertSubdomains(tx: Sql, rows: BnsSubdomainRow[]): Promise<void> {
  const byKey = new Map(rows.map((r) => [`${r.fully_qualified_subdomain}\n${r.tx_id}\n${r.index_block_hash}`, r]));
  if (!byKey.size) return;
  await tx`
    INSERT INTO bns_subdomains (fully_qualified_subdomain, name, namespace_id, owner, zonefile_hash, zonefile,
      parent_zonefile_hash, parent_zonefile_index, zonefile_offset, resolver, tx_id, index_block_hash, block_height)
    SELECT r.fully_qualified_subdomain, r.name, r.namespace_id, r.owner, r.zonefile_hash, r.zonefile,
      r.parent_zonefile_hash, r.parent_zonefile_index, r.zonefile_offset, r.resolver, r.tx_id, r.index_block_hash,
      r.block_height
    FROM json_to_recordset(${JSON.stringify([...byKey.values()])}::text::json) AS r(fully_qualified_subdomain text,
      name text, namespace_id text, owner text, zonefile_hash text, zonefile text, parent_zonefile_hash text,
      parent_zonefile_index integer, zonefile_offset integer, resolver text, tx_id text, index_block_hash text,
      block_height bigint)
    ON CONFLICT (fully_qualified_subdomain, tx_id, index_block_hash) DO UPDATE SET
      name = EXCLUDED.name, namespace_id = EXCLUDED.namespace_id, owner = EXCLUDED.owner,
      zonefile_hash = EXCLUDED.zonefile_hash, zonefile = EXCLUDED.zonefile,
      parent_zonefile_hash = EXCLUDED.parent_zonefile_hash, resolver = EXCLUDED.resolver,
      block_height = EXCLUDED.block_height`;
}

/** The rows of one `/attachments/new` body (a JSON text); non-BNS attachments and malformed ones are skipped. */
export async function writeBnsAttachments(tx: Sql, body: string): Promise<void> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return;
  }
  const zonefiles = bnsZonefileRows(parsed);
  // both statements are sent at once, in this order (the projector pipelines attachments: sendsWithoutWaiting)
  await Promise.all([insertZonefiles(tx, zonefiles), insertSubdomains(tx, zonefiles.flatMap(bnsSubdomainRows))]);
}

/** Parses the subdomains of the name-update zonefiles the migration backfilled (bns_subdomains_pending). */
export async function completeBnsBackfill(sql: Sql): Promise<number> {
  const pending = await sql<BnsZonefileRow[]>`
    SELECT z.name, z.zonefile_hash, z.zonefile, z.op, z.tx_id, z.index_block_hash, z.block_height::integer AS block_height,
      z.attachment_index::integer AS attachment_index
    FROM bns_subdomains_pending p
    JOIN bns_zonefiles z USING (name, zonefile_hash, tx_id, index_block_hash)`;
  const orphans = await sql<{ n: number }[]>`SELECT count(*)::integer AS n FROM bns_subdomains_pending`;
  if (!orphans[0]?.n) return 0;
  await sql.begin(async (tx) => {
    await insertSubdomains(tx as unknown as Sql, pending.flatMap(bnsSubdomainRows));
    await (tx as unknown as Sql)`DELETE FROM bns_subdomains_pending`;
  });
  return pending.length;
}
