/**
 * Transaction lookups and the mempool:
 *   GET /extended/v1/tx/:tx_id, /tx/multiple, /tx/mempool, /tx/mempool/stats, /address/:principal/mempool.
 * (`/extended/v1/tx/events` lives in events.ts.)
 */
import type { Router, HttpRequest } from '../../http/router.js';
import { json, redirect, HttpError } from '../../http/response.js';
import type { ApiContext } from '../context.js';
import type { Sql } from '../../store/connect.js';
import { chainTip } from '../../store/chain-tip.js';
import { ABI_SUBQUERY, mempoolTxJson, txJson, type MempoolDbRow, type TxDbRow } from '../serialize.js';
import { badParam, checkAddress, checkEnum, checkTxId, isPrincipal, paging, queryBool, queryInt, TX_ID_RE } from '../params.js';

const C32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const SCHEMA_ADDRESS_RE = new RegExp(`^[${C32}]{28,41}`);
const SCHEMA_CONTRACT_RE = new RegExp(`^[${C32}]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$`);

interface EventOpts {
  limit: number;
  offset: number;
}

/** The max block height a lookup may see: the tip, or tip+1 (the unconfirmed microblock stream) when unanchored. */
async function maxHeight(sql: Sql, unanchored: boolean): Promise<number> {
  const tip = await chainTip(sql);
  const h = tip?.block_height ?? 0;
  return unanchored ? h + 1 : h;
}

/** Event JSON of one placed tx, paged by event_index range (the reference's semantics). */
async function txEvents(sql: Sql, row: TxDbRow, page: EventOpts): Promise<unknown[]> {
  const rows = await sql<{ api: unknown }[]>`
    SELECT api FROM events
    WHERE tx_id = ${row.tx_id} AND index_block_hash = ${row.index_block_hash} AND microblock_hash = ${row.microblock_hash}
      AND event_index >= ${page.offset} AND event_index < ${page.offset + page.limit}
    ORDER BY event_index ASC`;
  return rows.map((r) => r.api);
}

/** The best placement of a tx within the visible heights (canonical first). */
async function findMinedTx(sql: Sql, txId: string, max: number): Promise<TxDbRow | undefined> {
  const [row] = await sql<TxDbRow[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM txs x
    WHERE x.tx_id = ${txId} AND x.block_height <= ${max}
    ORDER BY x.canonical DESC, x.microblock_canonical DESC, x.block_height DESC
    LIMIT 1`;
  return row;
}

/** A mempool row (pending or pruned: mined, dropped, replaced). */
async function findMempoolTx(sql: Sql, txId: string): Promise<MempoolDbRow | undefined> {
  const [row] = await sql<MempoolDbRow[]>`
    SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ${txId}`;
  return row;
}

/** Lookup order: mined canonical → mempool (incl. pruned) → non-canonical → undefined. (Also used by src/push.) */
export async function lookupTx(
  sql: Sql,
  txId: string,
  opts: { max: number; events: EventOpts; excludeFunctionArgs: boolean; includeNonCanonical: boolean },
): Promise<Record<string, unknown> | undefined> {
  const mined = await findMinedTx(sql, txId, opts.max);
  if (mined && mined.canonical && mined.microblock_canonical) {
    const events = await txEvents(sql, mined, opts.events);
    return txJson(mined, { events, excludeFunctionArgs: opts.excludeFunctionArgs });
  }
  const mempool = await findMempoolTx(sql, txId);
  if (mempool) return mempoolTxJson(mempool, { excludeFunctionArgs: opts.excludeFunctionArgs });
  if (mined && opts.includeNonCanonical) {
    const events = await txEvents(sql, mined, opts.events);
    return txJson(mined, { events, excludeFunctionArgs: opts.excludeFunctionArgs });
  }
  return undefined;
}

/**
 * lookupTx for many ids at once, without non-canonical placements (what /tx/multiple answers): every placement of
 * the ids (the best one within the visible heights is picked here, in lookupTx's order), their events and their
 * mempool rows, as three independent queries sent together — one round trip instead of two per id.
 */
async function lookupTxsCanonical(
  sql: Sql,
  txIds: string[],
  opts: { unanchored: boolean; events: EventOpts },
): Promise<Map<string, Record<string, unknown>>> {
  const { offset, limit } = opts.events;
  const [placed, eventRows, pool] = await Promise.all([
    sql<(TxDbRow & { tip: number | null })[]>`
      SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)},
        (SELECT b.block_height FROM blocks b WHERE b.canonical ORDER BY b.block_height DESC LIMIT 1) AS tip
      FROM txs x WHERE x.tx_id = ANY(${txIds})`,
    sql<{ tx_id: string; index_block_hash: string; microblock_hash: string; api: unknown }[]>`
      SELECT e.tx_id, e.index_block_hash, e.microblock_hash, e.api FROM events e
      WHERE e.tx_id = ANY(${txIds}) AND e.event_index >= ${offset} AND e.event_index < ${offset + limit}
      ORDER BY e.event_index ASC`,
    sql<MempoolDbRow[]>`SELECT x.*, ${sql.unsafe(ABI_SUBQUERY)} FROM mempool_txs x WHERE x.tx_id = ANY(${txIds})`,
  ]);
  const max = (placed[0]?.tip ?? 0) + (opts.unanchored ? 1 : 0);
  const best = new Map<string, TxDbRow>();
  const rank = (r: TxDbRow) => [r.canonical ? 1 : 0, r.microblock_canonical ? 1 : 0, Number(r.block_height)];
  for (const r of placed) {
    if (r.block_height > max) continue;
    const cur = best.get(r.tx_id);
    if (!cur) {
      best.set(r.tx_id, r);
      continue;
    }
    const [a, b] = [rank(r), rank(cur)];
    if (a[0] > b[0] || (a[0] === b[0] && (a[1] > b[1] || (a[1] === b[1] && a[2] > b[2])))) best.set(r.tx_id, r);
  }
  const out = new Map<string, Record<string, unknown>>();
  for (const r of best.values()) {
    if (!r.canonical || !r.microblock_canonical) continue;
    const events = eventRows
      .filter((e) => e.tx_id === r.tx_id && e.index_block_hash === r.index_block_hash && e.microblock_hash === r.microblock_hash)
      .map((e) => e.api);
    out.set(r.tx_id, txJson(r, { events, excludeFunctionArgs: false }));
  }
  for (const r of pool) if (!out.has(r.tx_id)) out.set(r.tx_id, mempoolTxJson(r, { excludeFunctionArgs: false }));
  return out;
}

function eventPaging(req: HttpRequest): EventOpts {
  const limit = queryInt(req, 'event_limit', { min: 0, max: 100 }) || 20;
  const offset = queryInt(req, 'event_offset', { min: 0 }) ?? 0;
  return { limit, offset };
}

/** `address` / `sender_address` / `recipient_address` on /tx/mempool: the schema pattern, then a real principal. */
function mempoolAddressParam(req: HttpRequest, name: string): string | undefined {
  const raw = req.query.get(name);
  if (raw === null) return undefined;
  if (!SCHEMA_ADDRESS_RE.test(raw)) checkAddress(`querystring/${name}`, raw);
  // the reference's wording, plus the parameter's name (its message names only the value)
  if (!isPrincipal(raw)) badParam(`Error: Invalid query parameter querystring/${name}: "${raw}" is not a valid STX address or principal`);
  return raw;
}

interface MempoolFilter {
  address?: string;
  sender?: string;
  recipient?: string;
}

type MempoolRow = MempoolDbRow & { total: number };

/** Pending mempool txs (plus, when not unanchored, those only in the unconfirmed microblock stream). */
async function mempoolList(
  sql: Sql,
  f: MempoolFilter,
  opts: { unanchored: boolean; limit: number; offset: number; orderBy: 'age' | 'size' | 'fee'; asc: boolean },
): Promise<{ total: number; results: Record<string, unknown>[] }> {
  // Pending, or (anchored view) mined only in an unconfirmed microblock. Written as one IN over two small index-backed
  // sets: an OR here made PostgreSQL scan every mempool row ever seen (1 s per page on a 100,000-block chain).
  const pendingCond = opts.unanchored
    ? sql`NOT x.pruned`
    : sql`x.tx_id IN (
        SELECT p.tx_id FROM mempool_txs p WHERE NOT p.pruned
        UNION ALL
        SELECT t.tx_id FROM txs t WHERE t.index_block_hash = '' AND t.canonical AND t.microblock_canonical)`;
  const filtered = f.address !== undefined || f.sender !== undefined || f.recipient !== undefined;
  const addrCond =
    f.address !== undefined
      ? sql`AND (x.sender_address = ${f.address} OR x.token_transfer_recipient = ${f.address}
               OR x.smart_contract_contract_id = ${f.address} OR x.contract_call_contract_id = ${f.address})`
      : sql``;
  const senderCond = f.sender !== undefined ? sql`AND x.sender_address = ${f.sender}` : sql``;
  const recipientCond = f.recipient !== undefined ? sql`AND x.token_transfer_recipient = ${f.recipient}` : sql``;
  // Ties (same receipt time / size / fee) keep arrival order in either direction, as the reference's answers show.
  const key = opts.orderBy === 'fee' ? sql`x.fee_rate` : opts.orderBy === 'size' ? sql`x.byte_size` : sql`x.receipt_time`;
  const dir = opts.asc ? sql`ASC` : sql`DESC`;
  const totalExpr = filtered
    ? sql`(COUNT(*) OVER())::int`
    : sql`(SELECT COUNT(*)::int FROM mempool_txs p WHERE NOT p.pruned)`;
  const rows = await sql<MempoolRow[]>`
    SELECT x.tx_id, x.api, x.status, x.replaced_by_tx_id, x.receipt_time, ${sql.unsafe(ABI_SUBQUERY)}, ${totalExpr} AS total
    FROM mempool_txs x
    WHERE ${pendingCond} ${addrCond} ${senderCond} ${recipientCond}
    ORDER BY ${key} ${dir}, x.seq ASC, x.tx_id ASC
    LIMIT ${opts.limit} OFFSET ${opts.offset}`;
  return {
    total: rows[0]?.total ?? 0,
    results: rows.map((r) => mempoolTxJson(r, { status: 'pending' })),
  };
}

const STATS_TYPES = ['token_transfer', 'smart_contract', 'contract_call', 'poison_microblock'] as const;

interface StatsRow {
  tx_type: string;
  n: number;
  f25: number | null;
  f50: number | null;
  f75: number | null;
  f95: number | null;
  a25: number | null;
  a50: number | null;
  a75: number | null;
  a95: number | null;
  s25: number | null;
  s50: number | null;
  s75: number | null;
  s95: number | null;
}

async function mempoolStats(sql: Sql): Promise<Record<string, Record<string, unknown>>> {
  const tip = await chainTip(sql);
  const height = (tip?.block_height ?? 0) + 1;
  const rows = await sql<StatsRow[]>`
    WITH p AS (
      SELECT CASE WHEN tx_type LIKE '%smart_contract' THEN 'smart_contract' ELSE tx_type END AS tx_type,
             fee_rate::float8 AS fee, (${height}::bigint - receipt_block_height)::float8 AS age, byte_size::float8 AS size
      FROM mempool_txs WHERE NOT pruned
    )
    SELECT tx_type, COUNT(*)::int AS n,
      percentile_cont(0.25) WITHIN GROUP (ORDER BY fee) AS f25, percentile_cont(0.5) WITHIN GROUP (ORDER BY fee) AS f50,
      percentile_cont(0.75) WITHIN GROUP (ORDER BY fee) AS f75, percentile_cont(0.95) WITHIN GROUP (ORDER BY fee) AS f95,
      percentile_cont(0.25) WITHIN GROUP (ORDER BY age) AS a25, percentile_cont(0.5) WITHIN GROUP (ORDER BY age) AS a50,
      percentile_cont(0.75) WITHIN GROUP (ORDER BY age) AS a75, percentile_cont(0.95) WITHIN GROUP (ORDER BY age) AS a95,
      percentile_cont(0.25) WITHIN GROUP (ORDER BY size) AS s25, percentile_cont(0.5) WITHIN GROUP (ORDER BY size) AS s50,
      percentile_cont(0.75) WITHIN GROUP (ORDER BY size) AS s75, percentile_cont(0.95) WITHIN GROUP (ORDER BY size) AS s95
    FROM p GROUP BY tx_type`;
  const byType = new Map(rows.map((r) => [r.tx_type, r]));
  const out: Record<string, Record<string, unknown>> = {
    tx_type_counts: {},
    tx_simple_fee_averages: {},
    tx_ages: {},
    tx_byte_sizes: {},
  };
  const pct = (a: number | null, b: number | null, c: number | null, d: number | null) => ({
    p25: a === null ? null : Number(a),
    p50: b === null ? null : Number(b),
    p75: c === null ? null : Number(c),
    p95: d === null ? null : Number(d),
  });
  for (const t of STATS_TYPES) {
    const r = byType.get(t);
    out.tx_type_counts[t] = r?.n ?? 0;
    out.tx_simple_fee_averages[t] = pct(r?.f25 ?? null, r?.f50 ?? null, r?.f75 ?? null, r?.f95 ?? null);
    out.tx_ages[t] = pct(r?.a25 ?? null, r?.a50 ?? null, r?.a75 ?? null, r?.a95 ?? null);
    out.tx_byte_sizes[t] = pct(r?.s25 ?? null, r?.s50 ?? null, r?.s75 ?? null, r?.s95 ?? null);
  }
  return out;
}

/** The /tx/multiple tx ids: repeated, or one comma-separated value; schema then prefix checks as the reference. */
function multipleTxIds(req: HttpRequest): string[] {
  let ids = req.query.getAll('tx_id');
  if (ids.length === 0) badParam(`querystring must have required property 'tx_id'`);
  if (ids.length === 1) ids = ids[0].split(',');
  ids.forEach((id, i) => {
    if (!TX_ID_RE.test(id)) badParam(`querystring/tx_id/${i} must match pattern "^(0x)?[a-fA-F0-9]{64}$"`);
  });
  for (const id of ids) if (!id.startsWith('0x')) badParam('Hex string is missing the "0x" prefix');
  return ids;
}

export function registerTxsRoutes(router: Router, ctx: ApiContext): void {
  const sql = ctx.sql;

  router.get('/extended/v1/tx/mempool', async (req) => {
    const { limit, offset } = paging(req, { limit: 20, max: 50 });
    const sender = mempoolAddressParam(req, 'sender_address');
    const recipient = mempoolAddressParam(req, 'recipient_address');
    const address = mempoolAddressParam(req, 'address');
    const orderByRaw = req.query.get('order_by');
    const orderBy = orderByRaw === null ? 'age' : checkEnum('querystring/order_by', orderByRaw, ['age', 'size', 'fee'] as const);
    const orderRaw = req.query.get('order');
    const order = orderRaw === null ? 'desc' : checkEnum('querystring/order', orderRaw, ['asc', 'desc'] as const);
    const unanchored = queryBool(req, 'unanchored');
    if (address !== undefined && (sender !== undefined || recipient !== undefined)) {
      throw new HttpError(400, 'The "address" filter cannot be specified with other address filters');
    }
    const { total, results } = await mempoolList(sql, { address, sender, recipient }, { unanchored, limit, offset, orderBy, asc: order === 'asc' });
    return json(200, { limit, offset, total, results });
  });

  router.get('/extended/v1/tx/mempool/stats', async () => json(200, await mempoolStats(sql)));

  router.get('/extended/v1/tx/multiple', async (req) => {
    const ids = multipleTxIds(req);
    const events = eventPaging(req);
    const unanchored = queryBool(req, 'unanchored');
    const byId = await lookupTxsCanonical(sql, [...new Set(ids.map((raw) => raw.toLowerCase()))], { unanchored, events });
    const out: Record<string, unknown> = {};
    let found = 0;
    for (const raw of ids) {
      if (raw in out) continue;
      const tx = byId.get(raw.toLowerCase());
      if (tx) found++;
      out[raw] = tx ? { found: true, result: tx } : { found: false, result: { tx_id: raw } };
    }
    if (found === 0) throw new HttpError(404, 'could not find any of the transactions by ID');
    return json(200, out);
  });

  router.get('/extended/v1/tx/:tx_id', async (req) => {
    const raw = req.params.tx_id;
    const id = checkTxId('params/tx_id', raw);
    const events = eventPaging(req);
    const unanchored = queryBool(req, 'unanchored');
    const excludeFunctionArgs = queryBool(req, 'exclude_function_args');
    if (!raw.startsWith('0x')) {
      return redirect(302, `/extended/v1/tx/0x${raw}${req.rawQuery ? '?' + req.rawQuery : ''}`);
    }
    const max = await maxHeight(sql, unanchored);
    const tx = await lookupTx(sql, id, { max, events, excludeFunctionArgs, includeNonCanonical: true });
    if (!tx) throw new HttpError(404, 'could not find transaction by ID');
    return json(200, tx);
  });

  router.get('/extended/v1/address/:principal/mempool', async (req) => {
    const principal = req.params.principal;
    if (!SCHEMA_ADDRESS_RE.test(principal) && !SCHEMA_CONTRACT_RE.test(principal)) {
      const l = 'params/principal';
      badParam(
        `${l} must match pattern "^[${C32}]{28,41}", ${l} must match pattern "^[${C32}]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$", ${l} must match a schema in anyOf`,
      );
    }
    const { limit, offset } = paging(req, { limit: 20, max: 50 });
    const unanchored = queryBool(req, 'unanchored');
    if (!isPrincipal(principal)) badParam('Invalid query parameter, params/principal is not a valid principal');
    const { total, results } = await mempoolList(sql, { address: principal }, { unanchored, limit, offset, orderBy: 'age', asc: false });
    return json(200, { limit, offset, total, results });
  });
}
