/**
 * Event lists and contract info:
 *   GET /extended/v1/tx/events                       (by tx_id xor address, optional type filter)
 *   GET /extended/v1/contract/:contract_id/events    (smart_contract_log events of one contract)
 *   GET /extended/v1/contract/:contract_id           (deploy tx, source, ABI as a jsonb-ordered string)
 */
import type { Router, HttpRequest } from '../../http/router.js';
import { json, HttpError } from '../../http/response.js';
import type { ApiContext } from '../context.js';
import { badParam, checkEnum, checkPrincipal, checkTxId, paging, queryBool } from '../params.js';

export const EVENT_TYPES = [
  'smart_contract_log',
  'stx_lock',
  'stx_asset',
  'fungible_token_asset',
  'non_fungible_token_asset',
] as const;
export type EventTypeName = (typeof EVENT_TYPES)[number];

/** `type` repeated and/or comma-separated; each value validated (label querystring/type/<i>). */
export function eventTypeFilter(req: HttpRequest): EventTypeName[] | undefined {
  const raw = req.query.getAll('type');
  if (raw.length === 0) return undefined;
  const values = raw.flatMap((v) => v.split(','));
  return values.map((v, i) => checkEnum(`querystring/type/${i}`, v, EVENT_TYPES));
}

/**
 * JSON text of a value with object keys in PostgreSQL jsonb order (shorter key first, equal lengths bytewise),
 * at every depth, without whitespace — what the reference prints for a contract ABI.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(jsonbOrder(value));
}

function jsonbOrder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonbOrder);
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).sort((a, b) => {
      const ab = Buffer.from(a, 'utf8');
      const bb = Buffer.from(b, 'utf8');
      return ab.length - bb.length || Buffer.compare(ab, bb);
    });
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = jsonbOrder((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}

interface EventApiRow {
  api: unknown;
}

export function registerEventsRoutes(router: Router, ctx: ApiContext): void {
  const sql = ctx.sql;

  router.get('/extended/v1/tx/events', async (req) => {
    const rawTxId = req.query.get('tx_id');
    const rawAddress = req.query.get('address');
    const txId = rawTxId === null ? undefined : checkTxId('querystring/tx_id', rawTxId);
    const address = rawAddress === null ? undefined : checkPrincipal('querystring/address', rawAddress);
    const types = eventTypeFilter(req);
    const { limit, offset } = paging(req, { limit: 20, max: 100 });
    if (txId === undefined && address === undefined) badParam(`can not find 'address' or 'tx_id' in the request`);
    if (txId !== undefined && address !== undefined) badParam(`can't handle both 'address' and 'tx_id' in the same request`);

    const typeCond = types ? sql`AND e.event_type IN ${sql(types)}` : sql``;
    const who =
      txId !== undefined
        ? sql`e.tx_id = ${txId}`
        : sql`(e.sender = ${address!} OR e.recipient = ${address!} OR e.locked_address = ${address!} OR e.contract_id = ${address!})
            AND CASE e.event_type
              WHEN 'stx_lock' THEN e.locked_address = ${address!}
              WHEN 'smart_contract_log' THEN e.contract_id = ${address!}
              ELSE (e.sender = ${address!} OR e.recipient = ${address!})
            END`;
    // By address (sql/0010_growth.sql): the page lies at or above the height of the (offset + limit)-th newest matching
    // event, found from the per-column (principal, block_height DESC) indexes without reading the whole history; the
    // exact order (which needs the txs' microblock_sequence) is then applied to that slice only.
    const n = offset + limit;
    // (a separate round trip: with the height as a literal the planner sees how few rows the page reads)
    let floor = sql``;
    if (txId === undefined) {
      const [cut] = await sql<{ h: number }[]>`
        SELECT c.block_height AS h FROM (
          (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
            WHERE e.sender = ${address!} AND e.canonical AND e.microblock_canonical AND ${who} ${typeCond}
            ORDER BY e.block_height DESC LIMIT ${n})
          UNION
          (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
            WHERE e.recipient = ${address!} AND e.canonical AND e.microblock_canonical AND ${who} ${typeCond}
            ORDER BY e.block_height DESC LIMIT ${n})
          UNION
          (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
            WHERE e.locked_address = ${address!} AND e.canonical AND e.microblock_canonical AND ${who} ${typeCond}
            ORDER BY e.block_height DESC LIMIT ${n})
          UNION
          (SELECT e.block_height, e.tx_id, e.index_block_hash, e.microblock_hash, e.event_index FROM events e
            WHERE e.contract_id = ${address!} AND e.canonical AND e.microblock_canonical AND ${who} ${typeCond}
            ORDER BY e.block_height DESC LIMIT ${n})
        ) c ORDER BY c.block_height DESC OFFSET ${n - 1} LIMIT 1`;
      if (cut) floor = sql`AND e.block_height >= ${cut.h}`;
    }
    const rows = await sql<EventApiRow[]>`
      SELECT e.api FROM events e
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE ${who} ${typeCond} ${floor}
        AND e.canonical AND e.microblock_canonical AND t.canonical AND t.microblock_canonical
      ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
      LIMIT ${limit} OFFSET ${offset}`;
    return json(200, { limit, offset, results: rows.map((r) => r.api) });
  });

  router.get('/extended/v1/contract/:contract_id/events', async (req) => {
    const contractId = req.params.contract_id;
    const { limit, offset } = paging(req, { limit: 20, max: 50 });
    // SPEC: unanchored=true includes events of unconfirmed microblocks; otherwise only anchored ones (height <= tip).
    const unanchored = queryBool(req, 'unanchored');
    const cap = unanchored ? sql`` : sql`AND e.index_block_hash <> ''`;
    const rows = await sql<EventApiRow[]>`
      SELECT e.api FROM events e
      JOIN txs t ON t.tx_id = e.tx_id AND t.index_block_hash = e.index_block_hash AND t.microblock_hash = e.microblock_hash
      WHERE e.contract_id = ${contractId} AND e.event_type = 'smart_contract_log'
        AND e.canonical AND e.microblock_canonical ${cap}
      ORDER BY e.block_height DESC, t.microblock_sequence DESC, e.tx_index DESC, e.event_index DESC
      LIMIT ${limit} OFFSET ${offset}`;
    return json(200, { limit, offset, results: rows.map((r) => r.api) });
  });

  router.get('/extended/v1/contract/:contract_id', async (req) => {
    const contractId = req.params.contract_id;
    const [row] = await sql<
      { tx_id: string; canonical: boolean; block_height: number; contract_abi: unknown; api: { smart_contract?: { clarity_version?: number | null; source_code?: string } } }[]
    >`
      SELECT tx_id, canonical, block_height, contract_abi, api FROM txs
      WHERE smart_contract_contract_id = ${contractId}
      ORDER BY (contract_abi IS NOT NULL AND contract_abi::text <> 'null') DESC, canonical DESC, microblock_canonical DESC,
        block_height DESC
      LIMIT 1`;
    if (!row) throw new HttpError(404, 'cannot find contract by ID');
    const sc = row.api.smart_contract ?? {};
    const abi = row.contract_abi === null || row.contract_abi === undefined ? null : jsonbText(row.contract_abi);
    return json(200, {
      tx_id: row.tx_id,
      canonical: row.canonical,
      contract_id: contractId,
      block_height: row.block_height,
      clarity_version: sc.clarity_version ?? null,
      source_code: sc.source_code ?? '',
      abi,
    });
  });
}
