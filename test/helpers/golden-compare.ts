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

// ---------------------------------------------------------------------------------------------------------------------
// fixtures/golden-ext (test/conformance/conformance-ext.test.ts): the same rules, with golden-ext/README.md's additions. Nothing
// above is changed by them, so the golden/ suite compares exactly as before.

/** A golden-ext entry: a GET is a bare path (as in golden/), a POST carries its JSON body. */
export interface GoldenExtEntry {
  request: string | { method: string; path: string; body: unknown };
  status: number;
  body: unknown;
  /** present only when the body is not JSON (text/plain supply, empty redirect bodies) */
  content_type?: string;
  location?: string;
}

export interface ExtRequest {
  method: string;
  /** path and query */
  path: string;
  /** the JSON body of a POST */
  body?: unknown;
}

export function extRequest(e: GoldenExtEntry): ExtRequest {
  return typeof e.request === 'string' ? { method: 'GET', path: e.request } : { method: e.request.method.toUpperCase(), path: e.request.path, body: e.request.body };
}

/**
 * The network the reference ran the scenario as (golden-ext/README.md: testnet streams with chain id 0x80000000, the
 * mainnet ones with 0x00000001; the empty database as testnet): its own `POST /rosetta/v1/network/list` answer, else
 * the principals the requests name (SP/SM mainnet, ST/SN testnet).
 */
export function goldenExtNetwork(golden: GoldenExtEntry[]): 'mainnet' | 'testnet' {
  for (const e of golden) {
    const r = extRequest(e);
    const ids = (e.body as { network_identifiers?: { network?: unknown }[] } | null)?.network_identifiers;
    if (r.method === 'POST' && r.path === '/rosetta/v1/network/list' && e.status === 200 && Array.isArray(ids)) {
      const n = ids[0]?.network;
      if (n === 'mainnet' || n === 'testnet') return n;
    }
  }
  for (const e of golden) {
    const m = /\/(S[PMTN])[0-9A-Z]{20,}/.exec(extRequest(e).path);
    if (m) return m[1] === 'SP' || m[1] === 'SM' ? 'mainnet' : 'testnet';
  }
  return 'testnet';
}

/** Our answer as received: `body` is the parsed JSON when the text parses, the text otherwise (null when empty). */
export interface ExtAnswer {
  status: number;
  location: string | null;
  contentType: string | null;
  body: unknown;
}

/** Canonical JSON (object keys sorted): structural equality, key order free, as a string. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .filter((k) => o[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * Where a list may hold items the reference orders arbitrarily among equals, and the tie key of an item there
 * (undefined: the item ties with nothing, its place is exact).
 *  - `/extended/v1/tokens/ft/{token}/holders`: `ORDER BY balance DESC` with no tie-breaker (golden-ext/README.md).
 *  - tx lists: block 1's txs, where the boot block's txs were adopted with `tx_index + 1`, tie on tx_index and the
 *    reference lists them in storage order (fixtures/README.md); Rosetta's block lists the same txs by hash.
 */
type TieKey = (item: unknown) => string | undefined;

function txTieKey(txKeys: Map<string, string>): TieKey {
  return (item) => {
    // a legacy block's `txs` names its txs by id only: their key comes from the golden answers that show them
    if (typeof item === 'string') return txKeys.get(item);
    if (!isObject(item)) return undefined;
    const t = isObject(item.tx) ? item.tx : item;
    // unanchored txs share block_hash '0x' and restart tx_index per microblock: the microblock keeps them apart
    if (typeof t.tx_id === 'string' && typeof t.block_hash === 'string' && typeof t.tx_index === 'number') return `tx:${t.block_hash}:${t.microblock_hash}:${t.tx_index}`;
    const id = isObject(item.transaction_identifier) ? item.transaction_identifier.hash : undefined;
    return typeof id === 'string' ? txKeys.get(id) : undefined;
  };
}

const holderTieKey: TieKey = (item) => (isObject(item) && typeof item.balance === 'string' ? `balance:${item.balance}` : undefined);

const isHoldersPath = (p: string) => /^\/extended\/v1\/tokens\/ft\/[^/]+\/holders$/.test(p);

/**
 * stx_inbound: the reference sorts its three arms (bulk sends, memo events, token transfers) by (height, microblock
 * sequence, tx index) with no tie-break, so a token transfer and its own memo event tie, and its sort leaves them in
 * the order its tables store them (page placement: an early block's tx can sit behind a later one's). The
 * microblock sequence is not in the answer; the tx id stands in for it (one tx has one sequence).
 */
const inboundTieKey: TieKey = (item) =>
  isObject(item) && typeof item.block_height === 'number' && typeof item.tx_index === 'number' && typeof item.tx_id === 'string'
    ? `inbound:${item.block_height}:${item.tx_index}:${item.tx_id}`
    : undefined;

const isInboundPath = (p: string) => /^\/extended\/v1\/address\/[^/]+\/stx_inbound$/.test(p);

/** What one golden-ext file tells about ties: every tied item the reference showed, per list path and tie key. */
export interface GoldenExtContext {
  /** `${path}\n${tieKey}` → canonical JSON of every item the reference listed there with that key */
  tied: Map<string, Set<string>>;
  /** tx id → its tie key (from the tx lists), for lists that name txs only by hash (Rosetta) */
  txKeys: Map<string, string>;
}

/** The lists of an answer whose order may tie: [location name, items, tie key]. */
function tieLists(path: string, body: unknown, ctx: Pick<GoldenExtContext, 'txKeys'>): { at: string; items: unknown[]; key: TieKey }[] {
  if (!isObject(body)) return [];
  const out: { at: string; items: unknown[]; key: TieKey }[] = [];
  if (Array.isArray(body.results)) {
    const key = isHoldersPath(path) ? holderTieKey : isInboundPath(path) ? inboundTieKey : txTieKey(ctx.txKeys);
    out.push({ at: 'results', items: body.results, key });
  }
  // the legacy single block (/extended/v1/block/by_*): its tx ids, which tie like the tx lists
  if (Array.isArray(body.txs) && body.txs.every((t) => typeof t === 'string')) out.push({ at: 'txs', items: body.txs, key: txTieKey(ctx.txKeys) });
  if (path === '/rosetta/v1/block' && isObject(body.block) && Array.isArray(body.block.transactions)) {
    out.push({ at: 'block.transactions', items: body.block.transactions, key: txTieKey(ctx.txKeys) });
  }
  return out;
}

export function goldenExtContext(golden: GoldenExtEntry[]): GoldenExtContext {
  const ctx: GoldenExtContext = { tied: new Map(), txKeys: new Map() };
  const key = txTieKey(new Map());
  const collectTxKeys = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(collectTxKeys);
    if (!isObject(v)) return;
    const k = key(v);
    if (k && typeof v.tx_id === 'string') ctx.txKeys.set(v.tx_id, k);
    Object.values(v).forEach(collectTxKeys);
  };
  for (const e of golden) if (e.status === 200) collectTxKeys(e.body);
  for (const e of golden) {
    if (e.status !== 200) continue;
    const path = extRequest(e).path.split('?')[0];
    for (const list of tieLists(path, normalizeExt(path, e.body), ctx)) {
      for (const item of list.items) {
        const k = list.key(item);
        if (k === undefined) continue;
        const id = `${path}\n${list.at}\n${k}`;
        let s = ctx.tied.get(id);
        if (!s) ctx.tied.set(id, (s = new Set()));
        s.add(canonicalJson(item));
      }
    }
  }
  return ctx;
}

/** golden-ext/README.md's values that are not comparable, removed (after fixtures/README.md's, stripVolatile). */
function normalizeExt(path: string, body: unknown): unknown {
  const b = stripVolatile(body);
  // computed against now(): only the shape counts
  if (path === '/extended/v2/blocks/average-times' && isObject(b)) {
    return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, typeof v === 'number' ? '<number>' : v]));
  }
  // Rosetta network/options: `node_version` is the Node.js runtime and `middleware_version` the serving software's
  // own version (the reference: its Node v22 and its package.json), not chain data; only their presence counts
  if (path === '/rosetta/v1/network/options' && isObject(b) && isObject(b.version)) {
    const v = b.version;
    return { ...b, version: { ...v, node_version: typeof v.node_version === 'string' ? '<string>' : v.node_version, middleware_version: typeof v.middleware_version === 'string' ? '<string>' : v.middleware_version } };
  }
  // mempool arrival order is wall-clock (fixtures/README.md): the mempool is a set
  if (path === '/rosetta/v1/mempool' && isObject(b) && Array.isArray(b.transaction_identifiers)) {
    return { ...b, transaction_identifiers: [...b.transaction_identifiers].sort((x, y) => canonicalJson(x).localeCompare(canonicalJson(y))) };
  }
  return b;
}

/**
 * Same items up to the reference's ties: the same tie key at every position; a run of tied items inside the page is
 * the same set; a run at either end of the page may have been cut by the page, so its items need only be distinct and
 * tied items the reference listed somewhere (ctx).
 */
function sameUpToTies(path: string, at: string, ours: unknown[], want: unknown[], key: TieKey, ctx: GoldenExtContext): boolean {
  if (ours.length !== want.length) return false;
  for (let i = 0; i < ours.length; i++) if (key(ours[i]) !== key(want[i])) return false;
  for (let s = 0; s < ours.length; ) {
    const k = key(want[s]);
    let e = s + 1;
    while (k !== undefined && e < want.length && key(want[e]) === k) e++;
    const a = ours.slice(s, e).map(canonicalJson);
    const b = want.slice(s, e).map(canonicalJson);
    const sameSet = [...a].sort().join('\n') === [...b].sort().join('\n');
    if (!sameSet) {
      const atEdge = s === 0 || e === ours.length;
      const known = k === undefined ? undefined : ctx.tied.get(`${path}\n${at}\n${k}`);
      if (!atEdge || !known || new Set(a).size !== a.length || !a.every((x) => known.has(x))) return false;
    }
    s = e;
  }
  return true;
}

function tieTolerantExt(path: string, a: unknown, b: unknown, ctx: GoldenExtContext): boolean {
  const la = tieLists(path, a, ctx);
  const lb = tieLists(path, b, ctx);
  if (!lb.length || la.length !== lb.length) return false;
  // everything but the lists must be equal as it is
  const without = (v: unknown, lists: { at: string }[]): unknown => {
    const c = { ...(v as Record<string, unknown>) };
    for (const l of lists) {
      if (l.at === 'results' || l.at === 'txs') delete c[l.at];
      else c.block = { ...(c.block as Record<string, unknown>), transactions: null };
    }
    return c;
  };
  if (!isDeepStrictEqual(without(a, la), without(b, lb))) return false;
  return lb.every((l, i) => la[i].at === l.at && sameUpToTies(path, l.at, la[i].items, l.items, l.key, ctx));
}

/**
 * The reference 5xx answers that come from the absent Stacks node (golden-ext/README.md "without a node"): the node
 * pool's own "no node" answers (502/503/504) are as right as a 4xx there.
 */
function isNodeOutage(e: GoldenExtEntry): boolean {
  const text = JSON.stringify(e.body ?? '');
  const path = extRequest(e).path.split('?')[0];
  return e.status >= 500 && (/fetch failed|ECONNREFUSED/.test(text) || (path === '/rosetta/v1/network/status' && e.status === 503));
}

/**
 * A JSON error: an object naming what went wrong (`message` or `error`), or a Rosetta error object (`code`). Where the
 * reference's Rosetta error is a bare `{}` (an invalid `transaction_identifier`), any JSON object.
 */
function isJsonError(body: unknown, rosetta: boolean, reference: unknown): boolean {
  if (!isObject(body)) return false;
  if (rosetta && isObject(reference) && Object.keys(reference).length === 0) return true;
  return typeof body.message === 'string' || typeof body.error === 'string' || (rosetta && typeof body.code === 'number');
}

/**
 * Compares one answer with the golden-ext one (golden-ext/README.md "How to compare"):
 *  - 2xx: the same status and a structurally equal body (key order free; a non-JSON body: the same text and media type);
 *  - 3xx: the same status and location;
 *  - 4xx: the same status and a JSON error; a reference 5xx (its bugs) → any 4xx (where the 5xx came from the absent
 *    node, a 502/503/504 also);
 *  - Rosetta error objects: the same `code` as well; when the reference's status is a 5xx, a 4xx or that same status.
 * Error bodies are compared no further, so the Rosetta 500 `stack` and the node endpoint named in Rosetta error
 * `details` never count.
 */
export function compareExtAnswer(e: GoldenExtEntry, ours: ExtAnswer, ctx: GoldenExtContext): CompareResult {
  const req = extRequest(e);
  const path = req.path.split('?')[0];
  const rosetta = path.startsWith('/rosetta/');
  if (e.status >= 400) {
    const wantCode = rosetta && isObject(e.body) && typeof e.body.code === 'number' ? e.body.code : undefined;
    const clientError = ours.status >= 400 && ours.status < 500;
    let statusOk: boolean;
    let want: string;
    if (e.status < 500) {
      statusOk = ours.status === e.status;
      want = String(e.status);
    } else if (wantCode !== undefined) {
      statusOk = clientError || ours.status === e.status;
      want = `a 4xx or ${e.status}`;
    } else if (isNodeOutage(e)) {
      statusOk = clientError || [502, 503, 504].includes(ours.status);
      want = 'a 4xx or 502/503/504 (no node)';
    } else {
      statusOk = clientError;
      want = 'a 4xx (the reference answered ' + e.status + ')';
    }
    if (!statusOk) return { ok: false, reason: `status ${ours.status}${ours.status === 0 ? ` (${String(ours.body)})` : ''}, want ${want}` };
    if (!isJsonError(ours.body, rosetta, e.body)) return { ok: false, reason: `status ${ours.status} but the body is not a JSON error` };
    if (wantCode !== undefined && (ours.body as Record<string, unknown>).code !== wantCode) {
      return { ok: false, reason: `Rosetta code ${JSON.stringify((ours.body as Record<string, unknown>).code)}, want ${wantCode}` };
    }
    return { ok: true };
  }
  if (ours.status !== e.status) return { ok: false, reason: `status ${ours.status}${ours.status === 0 ? ` (${String(ours.body)})` : ''}, want ${e.status}` };
  if (e.status >= 300) return ours.location === (e.location ?? null) ? { ok: true } : { ok: false, reason: `location ${ours.location}, want ${e.location}` };
  if (e.content_type) {
    const media = (ct: string | null | undefined) => (ct ?? '').split(';')[0].trim().toLowerCase();
    if (media(ours.contentType) !== media(e.content_type)) return { ok: false, reason: `content-type ${ours.contentType}, want ${e.content_type}` };
    return isDeepStrictEqual(ours.body, e.body) ? { ok: true } : { ok: false, reason: `body ${JSON.stringify(ours.body)?.slice(0, 160)}, want ${JSON.stringify(e.body)?.slice(0, 160)}` };
  }
  const a = normalizeExt(path, ours.body);
  const b = normalizeExt(path, e.body);
  if (canonicalJson(a) === canonicalJson(b)) return { ok: true };
  if (tieTolerantExt(path, a, b, ctx)) return { ok: true, tieTolerant: true };
  return { ok: false, reason: firstDifference(a, b) };
}
