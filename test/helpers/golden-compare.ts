/**
 * Comparing our answers with the reference's recorded ones (fixtures/golden). Two documented adjustments:
 *  - volatile values (fixtures/README.md) are removed from both sides;
 *  - SPEC.md's deliberate departures from the reference are applied to the golden answer (specDecisions()).
 */
import { isDeepStrictEqual } from 'node:util';

export interface GoldenEntry {
  request: string;
  status: number;
  body: unknown;
  location?: string;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Values that depend on the wall clock or the build: never comparable. */
export function stripVolatile(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripVolatile);
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) {
      if (k === 'server_version' || k === 'receipt_time' || k === 'receipt_time_iso') continue;
      // block_time of a tx seen only in an unconfirmed microblock is its arrival time
      if ((k === 'block_time' || k === 'block_time_iso') && o.is_unanchored === true) continue;
      out[k] = stripVolatile(x);
    }
    return out;
  }
  return v;
}

/**
 * SPEC.md "Decisions" applied to a golden entry: the expected status and body for stacks-pulse.
 * Returns the adjusted entry, plus `ignoreKeys` our body may carry beyond the reference's.
 */
export function specDecisions(e: GoldenEntry): { status: number; body: unknown; anyClientError?: boolean; extraArrays?: string[] } {
  const path = e.request.split('?')[0];
  const query = new URLSearchParams(e.request.split('?')[1] ?? '');
  // a reference 500 is a bug: we answer a 4xx
  if (e.status >= 500) return { status: e.status, body: e.body, anyClientError: true };
  if (e.status !== 200) return { status: e.status, body: e.body };
  const body = e.body as Record<string, Json>;
  // tx events: the array is `results`, not `events`
  if (path === '/extended/v1/tx/events' && body && 'events' in body) {
    const { events, ...rest } = body;
    return { status: 200, body: { ...rest, results: events } };
  }
  // contract events validate `unanchored` (the reference ignores it)
  if (/^\/extended\/v1\/contract\/[^/]+\/events$/.test(path)) {
    const u = query.get('unanchored');
    if (u !== null && !['true', 'false', '1', '0'].includes(u)) return { status: 400, body: null, anyClientError: true };
  }
  // tx/multiple: 404 when none of the ids is found
  if (path === '/extended/v1/tx/multiple' && body && Object.values(body).every((x) => (x as { found: boolean }).found === false)) {
    return { status: 404, body: null, anyClientError: true };
  }
  // with_transfers also carries ft_transfers and nft_transfers
  if (/\/with_transfers$/.test(path)) return { status: 200, body, extraArrays: ['ft_transfers', 'nft_transfers'] };
  return { status: 200, body };
}

export interface CompareResult {
  ok: boolean;
  /** matched only after ignoring the order of equal-key items (reference ties) */
  tieTolerant?: boolean;
  reason?: string;
}

function sortedTxIds(list: unknown): string[] | null {
  if (!Array.isArray(list)) return null;
  return list.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).sort();
}

/** Compares one answer of ours with the golden one. */
/**
 * Every mempool tx the golden answers show (stripped of volatile values), by tx id: the members an age-ordered mempool
 * page may hold. Arrival order is wall-clock: the reference's replay received some txs within one second (a tie, listed
 * in arrival order), a slower replay may not, so which tied txs fill a page is not comparable (fixtures/README.md).
 */
export function goldenMempoolTxs(golden: GoldenEntry[]): Map<string, unknown> {
  const byId = new Map<string, unknown>();
  for (const e of golden) {
    const b = e.body as { results?: { tx_id?: string; tx_status?: string }[] } | null;
    if (e.status !== 200 || !isAgeOrderedMempoolList(e.request) || !Array.isArray(b?.results)) continue;
    for (const r of b.results) if (r?.tx_id) byId.set(r.tx_id, stripVolatile(r));
  }
  return byId;
}

function isAgeOrderedMempoolList(request: string): boolean {
  const [p, q = ''] = request.split('?');
  const orderBy = new URLSearchParams(q).get('order_by');
  return (p === '/extended/v1/tx/mempool' || /^\/extended\/v1\/address\/[^/]+\/mempool$/.test(p)) && (orderBy === null || orderBy === 'age');
}

export function compareAnswer(
  e: GoldenEntry,
  status: number,
  location: string | null,
  body: unknown,
  mempoolTxs?: Map<string, unknown>,
): CompareResult {
  const want = specDecisions(e);
  if (want.anyClientError) {
    if (status >= 400 && status < 500 && body && typeof body === 'object') return { ok: true };
    return { ok: false, reason: `status ${status}, want a 4xx JSON error` };
  }
  if (status !== want.status) return { ok: false, reason: `status ${status}, want ${want.status}` };
  if (status >= 300 && status < 400) {
    return location === e.location ? { ok: true } : { ok: false, reason: `location ${location}, want ${e.location}` };
  }
  if (status >= 400) {
    const b = body as Record<string, unknown> | null;
    return b && typeof b.message === 'string' && b.statusCode === status
      ? { ok: true }
      : { ok: false, reason: 'error body is not {statusCode, error, message}' };
  }
  let ours = body as Record<string, unknown>;
  if (want.extraArrays && ours && typeof ours === 'object') {
    ours = { ...ours };
    for (const k of want.extraArrays) {
      if (!Array.isArray(ours[k])) return { ok: false, reason: `${k} is not an array` };
      delete ours[k];
    }
  }
  const a = stripVolatile(ours);
  const b = stripVolatile(want.body);
  if (isDeepStrictEqual(a, b)) return { ok: true };
  // Reference ties: mempool lists tie on receipt time; block tx lists tie on tx_index (boot txs adopted by block 1).
  const tolerant = tieTolerantEqual(a, b);
  if (tolerant) return { ok: true, tieTolerant: true };
  if (mempoolTxs && isAgeOrderedMempoolList(e.request) && samePageOfKnownTxs(a, b, mempoolTxs)) return { ok: true, tieTolerant: true };
  return { ok: false, reason: firstDifference(a, b) };
}

/** Same paging envelope, and every tx listed is one the reference listed, in the same shape. */
function samePageOfKnownTxs(a: unknown, b: unknown, known: Map<string, unknown>): boolean {
  const ao = a as { limit?: number; offset?: number; total?: number; results?: { tx_id: string }[] };
  const bo = b as typeof ao;
  if (!Array.isArray(ao?.results) || !Array.isArray(bo?.results)) return false;
  if (ao.limit !== bo.limit || ao.offset !== bo.offset || ao.total !== bo.total || ao.results.length !== bo.results.length) return false;
  return ao.results.every((r) => known.has(r.tx_id) && isDeepStrictEqual(r, known.get(r.tx_id)));
}

function tieTolerantEqual(a: unknown, b: unknown): boolean {
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const normalize = (o: Record<string, unknown>): unknown => {
    const c: Record<string, unknown> = { ...o };
    if (Array.isArray(c.txs)) c.txs = sortedTxIds(c.txs);
    if (Array.isArray(c.results)) {
      c.results = (c.results as unknown[])
        .map((r) => (r && typeof r === 'object' && Array.isArray((r as Record<string, unknown>).txs) ? { ...(r as object), txs: sortedTxIds((r as Record<string, unknown>).txs) } : r))
        .map((r) => JSON.stringify(r))
        .sort();
    }
    return c;
  };
  return isDeepStrictEqual(normalize(ao), normalize(bo));
}

/** A short description of where two JSON values first differ. */
export function firstDifference(a: unknown, b: unknown, path = '$'): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}: length ${a.length}, want ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
      if (!(k in ao)) return `${path}.${k}: missing, want ${JSON.stringify(bo[k])?.slice(0, 120)}`;
      if (!(k in bo)) return `${path}.${k}: unexpected ${JSON.stringify(ao[k])?.slice(0, 120)}`;
      const d = firstDifference(ao[k], bo[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: ${JSON.stringify(a)?.slice(0, 160)}, want ${JSON.stringify(b)?.slice(0, 160)}`;
}
