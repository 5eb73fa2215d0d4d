/**
 * Conformance with the reference for the endpoint families being added (fixtures/golden-ext): start a fresh service on
 * each recorded node stream (a copy of the stream's imported database), send every request the reference answered there (GET, and POST with its JSON body) and
 * compare by golden-ext/README.md's rules (test/helpers/golden-compare.ts compareExtAnswer).
 *
 * Each request belongs to one endpoint family (test/helpers/golden-families.ts). A `must-match` family fails the test
 * on any mismatch, and its answers must also validate against the served OpenAPI document; a `not-served` family is
 * only reported. A request no family claims fails the test.
 * CONFORMANCE_ONLY=<path prefix> narrows the requests; CONFORMANCE_REPORT=<file> writes every mismatch.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { appendFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES_DIR, goldenExtNames, readGoldenExt } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { compareExtAnswer, extRequest, goldenExtContext, goldenExtNetwork, type ExtAnswer, type ExtRequest, type GoldenExtEntry } from '../helpers/golden-compare.js';
import { ENDPOINT_FAMILIES, familyOf, referenceBug, type EndpointFamily } from '../helpers/golden-families.js';
import { fetchAnswerChecker, type AnswerCheck } from '../helpers/openapi-validate.js';

const only = process.env.CONFORMANCE_ONLY;
const report = process.env.CONFORMANCE_REPORT;
/** requests in flight at once, per scenario */
const CONCURRENCY = 4;

interface Tally {
  matched: number;
  total: number;
  tieTolerant: number;
}
/** family → totals over every scenario run, for the summary */
const summary = new Map<string, Tally>(ENDPOINT_FAMILIES.map((f) => [f.name, { matched: 0, total: 0, tieTolerant: 0 }]));

/** One request; a broken or hung connection is an answer with status 0 (a mismatch), not the end of the scenario. */
async function send(api: string, req: ExtRequest): Promise<ExtAnswer> {
  const init: RequestInit = { method: req.method, redirect: 'manual', signal: AbortSignal.timeout(15_000) };
  if (req.method !== 'GET') {
    init.headers = { 'content-type': 'application/json' };
    init.body = JSON.stringify(req.body);
  }
  let res: Response;
  let text: string;
  try {
    res = await fetch(api + req.path, init);
    text = await res.text();
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { status: 0, location: null, contentType: null, body: `transport error: ${(err as Error).message}${cause ? ` (${cause})` : ''}` };
  }
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, location: res.headers.get('location'), contentType: res.headers.get('content-type'), body };
}

/** Runs `fn` over `items` with at most `n` in flight; results in input order. */
async function pool<T, R>(items: T[], n: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

const describeRequest = (r: ExtRequest) => (r.method === 'GET' ? r.path : `${r.method} ${r.path} ${JSON.stringify(r.body)}`.slice(0, 300));

/** Sends every golden-ext request of a scenario; returns what fails the test (unknown families, must-match mismatches). */
async function runScenario(svc: TestService, golden: GoldenExtEntry[], label: string): Promise<string[]> {
  const ctx = goldenExtContext(golden);
  const entries = golden.filter((e) => !only || extRequest(e).path.startsWith(only));
  const unclaimed: string[] = [];
  const planned: { e: GoldenExtEntry; req: ExtRequest; family: EndpointFamily }[] = [];
  for (const e of entries) {
    const req = extRequest(e);
    const hit = familyOf(req.method, req.path);
    if (hit.family) planned.push({ e, req, family: hit.family });
    else unclaimed.push(`${label}: ${hit.error}`);
  }
  const failures = [...unclaimed];
  // OpenAPI: only routes we serve are in the document, so only must-match families are checked against it.
  let checkAgainstOpenApi: AnswerCheck | undefined;
  if (planned.some((p) => p.family.state === 'must-match')) checkAgainstOpenApi = await fetchAnswerChecker(svc.api);

  const results = await pool(planned, CONCURRENCY, async (p) => {
    const ours = await send(svc.api, p.req);
    const r = compareExtAnswer(p.e, ours, ctx);
    const schemaError = p.family.state === 'must-match' ? checkAgainstOpenApi!(p.req.method, p.req.path, ours.status, ours.body, ours.contentType) : undefined;
    return { ...p, r, schemaError };
  });

  const lines: string[] = [];
  const mismatches: string[] = [];
  for (const f of ENDPOINT_FAMILIES) {
    const mine = results.filter((x) => x.family === f);
    if (!mine.length) continue;
    const bad = mine.filter((x) => !x.r.ok);
    const tolerant = mine.filter((x) => x.r.ok && x.r.tieTolerant).length;
    const schemaBad = mine.filter((x) => x.schemaError);
    const t = summary.get(f.name)!;
    t.total += mine.length;
    t.matched += mine.length - bad.length;
    t.tieTolerant += tolerant;
    const line =
      `${label} ${f.name}: ${mine.length - bad.length}/${mine.length} match` +
      (tolerant ? ` (${tolerant} up to reference tie order)` : '') +
      (f.state === 'not-served' ? ' (not served yet)' : '') +
      (schemaBad.length ? `; ${schemaBad.length} answers do not match the OpenAPI document` : '');
    lines.push(line);
    for (const x of bad) mismatches.push(`  [${f.name}] ${describeRequest(x.req)} → ${x.r.reason}`);
    for (const x of schemaBad) mismatches.push(`  [${f.name}] ${describeRequest(x.req)} → OpenAPI: ${x.schemaError}`);
    if (f.state === 'must-match') {
      for (const x of bad) {
        if (!referenceBug(f, label, x.req.path)) failures.push(`${label} [${f.name}] ${describeRequest(x.req)} → ${x.r.reason}`);
      }
      for (const x of schemaBad) failures.push(`${label} [${f.name}] ${describeRequest(x.req)} → OpenAPI: ${x.schemaError}`);
    }
  }
  console.log(lines.join('\n'));
  if (report) appendFileSync(report, [...lines, ...unclaimed.map((u) => '  ' + u), ...mismatches, ''].join('\n'));
  return failures;
}

/** The reference's own answer, as if we had sent it (a reference 5xx: the 4xx the rules want instead). */
function referenceAsOurs(e: GoldenExtEntry): ExtAnswer {
  if (e.status >= 500) {
    const code = (e.body as { code?: unknown } | null)?.code;
    return { status: 400, location: null, contentType: 'application/json', body: { statusCode: 400, error: 'Bad Request', message: 'bad', ...(typeof code === 'number' ? { code } : {}) } };
  }
  return { status: e.status, location: e.location ?? null, contentType: e.content_type || 'application/json', body: e.body };
}

let scenariosRun = 0;
const scenarios = goldenExtNames().filter((n) => n === '_empty-db' || existsSync(path.join(FIXTURES_DIR, 'events', `${n}.tsv`)));

describe('golden-ext comparison rules (no service)', () => {
  const ok = (e: GoldenExtEntry, ours: ExtAnswer, golden: GoldenExtEntry[] = [e]) => compareExtAnswer(e, ours, goldenExtContext(golden));
  const json = (status: number, body: unknown): ExtAnswer => ({ status, location: null, contentType: 'application/json', body });

  it('every reference answer matches itself (its 5xx: a 4xx), every request has one family, the network is known', () => {
    const bad: string[] = [];
    for (const name of scenarios) {
      const golden = readGoldenExt<GoldenExtEntry[]>(`${name}.json`);
      const ctx = goldenExtContext(golden);
      // fixtures/README.md: the two mainnet-* streams are mainnet, the rest (and the empty database) testnet
      const network = goldenExtNetwork(golden);
      if (network !== (name.startsWith('mainnet-') ? 'mainnet' : 'testnet')) bad.push(`${name}: network ${network}`);
      for (const e of golden) {
        const r = compareExtAnswer(e, referenceAsOurs(e), ctx);
        if (!r.ok || r.tieTolerant) bad.push(`${name} ${JSON.stringify(e.request).slice(0, 200)} → ${r.reason ?? 'tie-tolerant'}`);
        const f = familyOf(extRequest(e).method, extRequest(e).path);
        if (!f.family) bad.push(`${name} ${f.error}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('2xx: key order free, values and list order exact', () => {
    const e: GoldenExtEntry = { request: '/extended/v1/tx', status: 200, body: { limit: 2, total: 2, results: [{ tx_id: '0xa', x: 1 }, { tx_id: '0xb' }] } };
    expect(ok(e, json(200, { results: [{ x: 1, tx_id: '0xa' }, { tx_id: '0xb' }], total: 2, limit: 2 })).ok).toBe(true);
    expect(ok(e, json(200, { limit: 2, total: 2, results: [{ tx_id: '0xb' }, { tx_id: '0xa', x: 1 }] })).ok).toBe(false);
    expect(ok(e, json(200, { limit: 2, total: 3, results: [{ tx_id: '0xa', x: 1 }, { tx_id: '0xb' }] })).ok).toBe(false);
    expect(ok(e, json(201, e.body)).ok).toBe(false);
  });

  it('ft holders with equal balances compare as a set, also where the page cuts the tie', () => {
    const h = (address: string, balance: string) => ({ address, balance });
    const full: GoldenExtEntry = { request: '/extended/v1/tokens/ft/stx/holders', status: 200, body: { limit: 100, offset: 0, total: 4, results: [h('A', '9'), h('B', '5'), h('C', '5'), h('D', '1')] } };
    const page: GoldenExtEntry = { request: '/extended/v1/tokens/ft/stx/holders?limit=1&offset=1', status: 200, body: { limit: 1, offset: 1, total: 4, results: [h('B', '5')] } };
    const golden = [full, page];
    const swapped = ok(full, json(200, { limit: 100, offset: 0, total: 4, results: [h('A', '9'), h('C', '5'), h('B', '5'), h('D', '1')] }), golden);
    expect(swapped).toEqual({ ok: true, tieTolerant: true });
    expect(ok(full, json(200, { limit: 100, offset: 0, total: 4, results: [h('B', '5'), h('A', '9'), h('C', '5'), h('D', '1')] }), golden).ok).toBe(false);
    expect(ok(full, json(200, { limit: 100, offset: 0, total: 4, results: [h('A', '9'), h('C', '5'), h('C', '5'), h('D', '1')] }), golden).ok).toBe(false);
    expect(ok(page, json(200, { limit: 1, offset: 1, total: 4, results: [h('C', '5')] }), golden).ok).toBe(true);
    expect(ok(page, json(200, { limit: 1, offset: 1, total: 4, results: [h('E', '5')] }), golden).ok).toBe(false);
    // not a holders list: no tie tolerance
    const other: GoldenExtEntry = { request: '/extended/v1/tokens/nft/holdings', status: 200, body: { results: [h('B', '5'), h('C', '5')] } };
    expect(ok(other, json(200, { results: [h('C', '5'), h('B', '5')] })).ok).toBe(false);
  });

  it('stx_inbound rows of one tx (a transfer and its memo event) compare as a set; rows of other txs keep their order', () => {
    const r = (tx_id: string, block_height: number, transfer_type: string) => ({ sender: 'S', amount: '1', memo: '0x00', block_height, tx_id, transfer_type, tx_index: 0 });
    const path = '/extended/v1/address/ST1HB1T8WRNBYB0Y3T7WXZS38NKKPTBR3EG9EPJKR/stx_inbound';
    const e: GoldenExtEntry = { request: path, status: 200, body: { limit: 20, offset: 0, total: 3, results: [r('0xa', 9, 'stx-transfer'), r('0xa', 9, 'stx-transfer-memo'), r('0xb', 8, 'stx-transfer')] } };
    const swapped = ok(e, json(200, { limit: 20, offset: 0, total: 3, results: [r('0xa', 9, 'stx-transfer-memo'), r('0xa', 9, 'stx-transfer'), r('0xb', 8, 'stx-transfer')] }));
    expect(swapped).toEqual({ ok: true, tieTolerant: true });
    expect(ok(e, json(200, { limit: 20, offset: 0, total: 3, results: [r('0xb', 8, 'stx-transfer'), r('0xa', 9, 'stx-transfer'), r('0xa', 9, 'stx-transfer-memo')] })).ok).toBe(false);
    expect(ok(e, json(200, { limit: 20, offset: 0, total: 3, results: [r('0xa', 9, 'stx-transfer'), r('0xa', 9, 'stx-transfer'), r('0xb', 8, 'stx-transfer')] })).ok).toBe(false);
  });

  it("block 1's txs tied on tx_index compare as a set; other tx order is exact", () => {
    const tx = (tx_id: string, tx_index: number) => ({ tx_id, tx_index, block_hash: '0x01', block_height: 1 });
    const e: GoldenExtEntry = { request: '/extended/v2/blocks/1/transactions', status: 200, body: { total: 3, results: [tx('0xa', 0), tx('0xb', 1), tx('0xc', 1)] } };
    expect(ok(e, json(200, { total: 3, results: [tx('0xa', 0), tx('0xc', 1), tx('0xb', 1)] }))).toEqual({ ok: true, tieTolerant: true });
    expect(ok(e, json(200, { total: 3, results: [tx('0xb', 1), tx('0xa', 0), tx('0xc', 1)] })).ok).toBe(false);
  });

  it("a legacy block's tx ids tied on tx_index compare as a set (keys from the golden's tx objects)", () => {
    const tx = (tx_id: string, tx_index: number) => ({ tx_id, tx_index, block_hash: '0x01', block_height: 1 });
    const list: GoldenExtEntry = { request: '/extended/v2/blocks/1/transactions', status: 200, body: { results: [tx('0xa', 1), tx('0xb', 1), tx('0xc', 0)] } };
    const e: GoldenExtEntry = { request: '/extended/v1/block/by_burn_block_hash/0x01', status: 200, body: { height: 1, txs: ['0xa', '0xb', '0xc'] } };
    const c = goldenExtContext([list, e]);
    expect(compareExtAnswer(e, json(200, { height: 1, txs: ['0xb', '0xa', '0xc'] }), c)).toEqual({ ok: true, tieTolerant: true });
    expect(compareExtAnswer(e, json(200, { height: 1, txs: ['0xc', '0xa', '0xb'] }), c).ok).toBe(false);
    expect(compareExtAnswer(e, json(200, { height: 2, txs: ['0xb', '0xa', '0xc'] }), c).ok).toBe(false);
  });

  it('non-comparable values: unanchored block_time, mempool receipt_time, average-times, Rosetta mempool order', () => {
    const u: GoldenExtEntry = { request: '/extended/v1/microblock/unanchored/txs', status: 200, body: { results: [{ tx_id: '0xa', is_unanchored: true, block_time: 1, block_time_iso: 'x' }] } };
    expect(ok(u, json(200, { results: [{ tx_id: '0xa', is_unanchored: true, block_time: 2, block_time_iso: 'y' }] })).ok).toBe(true);
    const m: GoldenExtEntry = { request: '/extended/v1/search/0xa?include_metadata=true', status: 200, body: { found: true, result: { metadata: { tx_id: '0xa', receipt_time: 1, receipt_time_iso: 'x' } } } };
    expect(ok(m, json(200, { found: true, result: { metadata: { tx_id: '0xa', receipt_time: 5, receipt_time_iso: 'z' } } })).ok).toBe(true);
    const a: GoldenExtEntry = { request: '/extended/v2/blocks/average-times', status: 200, body: { last_1h: 0, last_24h: 0, last_7d: 0, last_30d: 0 } };
    expect(ok(a, json(200, { last_1h: 3.5, last_24h: 0, last_7d: 1, last_30d: 0 })).ok).toBe(true);
    expect(ok(a, json(200, { last_1h: 3.5, last_24h: 0, last_7d: 1 })).ok).toBe(false);
    const rm: GoldenExtEntry = { request: { method: 'POST', path: '/rosetta/v1/mempool', body: {} }, status: 200, body: { transaction_identifiers: [{ hash: '0xa' }, { hash: '0xb' }] } };
    expect(ok(rm, json(200, { transaction_identifiers: [{ hash: '0xb' }, { hash: '0xa' }] })).ok).toBe(true);
  });

  it('errors: 4xx same status and a JSON error; reference 5xx any 4xx; Rosetta same code; no-node 5xx also 502/503/504', () => {
    const nf: GoldenExtEntry = { request: '/v1/names/nonexistent.btc', status: 404, body: { error: 'Name not found' } };
    expect(ok(nf, json(404, { statusCode: 404, error: 'Not Found', message: 'no such name' })).ok).toBe(true);
    expect(ok(nf, json(400, { statusCode: 400, error: 'Bad Request', message: 'x' })).ok).toBe(false);
    expect(ok(nf, { status: 404, location: null, contentType: 'text/plain', body: 'not found' }).ok).toBe(false);
    const bug: GoldenExtEntry = { request: '/extended/v1/contract/by_trait?trait_abi=notjson', status: 500, body: { error: 'x' } };
    expect(ok(bug, json(400, { statusCode: 400, error: 'Bad Request', message: 'trait_abi is not JSON' })).ok).toBe(true);
    expect(ok(bug, json(500, { statusCode: 500, error: 'x', message: 'x' })).ok).toBe(false);
    expect(ok(bug, json(503, { statusCode: 503, error: 'x', message: 'x' })).ok).toBe(false);
    const price: GoldenExtEntry = { request: '/v2/prices/namespaces/btc', status: 500, body: { message: 'fetch failed' } };
    expect(ok(price, json(503, { statusCode: 503, error: 'Service Unavailable', message: 'no node available' })).ok).toBe(true);
    const rb = (status: number, code: number): GoldenExtEntry => ({ request: { method: 'POST', path: '/rosetta/v1/block', body: {} }, status, body: { code, message: 'm', retriable: true } });
    expect(ok(rb(400, 610), json(400, { code: 610, message: 'Invalid network.', retriable: false })).ok).toBe(true);
    expect(ok(rb(400, 610), json(400, { code: 611, message: 'Invalid blockchain.', retriable: false })).ok).toBe(false);
    expect(ok(rb(500, 605), json(500, { code: 605, message: 'Block not found.', retriable: true })).ok).toBe(true);
    expect(ok(rb(500, 605), json(404, { code: 605, message: 'Block not found.', retriable: true })).ok).toBe(true);
    expect(ok(rb(500, 605), json(404, { code: 607, message: 'x', retriable: true })).ok).toBe(false);
  });

  it('3xx: same status and location; text/plain: same text and media type', () => {
    const r: GoldenExtEntry = { request: '/extended/v1/tx/ab/raw', status: 302, body: '', content_type: '', location: '/extended/v1/tx/0xab/raw' };
    expect(ok(r, { status: 302, location: '/extended/v1/tx/0xab/raw', contentType: null, body: null }).ok).toBe(true);
    expect(ok(r, { status: 301, location: '/extended/v1/tx/0xab/raw', contentType: null, body: null }).ok).toBe(false);
    expect(ok(r, { status: 302, location: '/extended/v1/tx/ab/raw', contentType: null, body: null }).ok).toBe(false);
    const t: GoldenExtEntry = { request: '/extended/v1/stx_supply/total/plain', status: 200, body: 1.5, content_type: 'text/plain' };
    expect(ok(t, { status: 200, location: null, contentType: 'text/plain; charset=utf-8', body: 1.5 }).ok).toBe(true);
    expect(ok(t, { status: 200, location: null, contentType: 'application/json', body: 1.5 }).ok).toBe(false);
    expect(ok(t, { status: 200, location: null, contentType: 'text/plain', body: 1.25 }).ok).toBe(false);
  });

  it('the family table: unknown and ambiguous requests are errors', () => {
    expect(familyOf('GET', '/extended/v1/address/SP1/balances?limit=1').family?.name).toBe('accounts-balances');
    expect(familyOf('GET', '/extended/v1/address/SP1/transactions?limit=1').family?.name).toBe('accounts');
    expect(familyOf('POST', '/rosetta/v1/block').family?.name).toBe('rosetta');
    expect(familyOf('GET', '/extended/v1/address/SP1/whatever').error).toMatch(/no endpoint family/);
    expect(familyOf('GET', '/extended/v3/anything').error).toMatch(/no endpoint family/);
    expect(familyOf('PUT', '/extended/v1/fee_rate').error).toMatch(/no endpoint family/);
  });
});

describe('REST conformance with the reference for the families being added (golden-ext answers)', () => {
  afterAll(() => {
    const rows = ENDPOINT_FAMILIES.filter((f) => summary.get(f.name)!.total > 0).map((f) => {
      const t = summary.get(f.name)!;
      const pct = Math.floor((100 * t.matched) / t.total);
      return `  ${f.name.padEnd(18)} [${f.capability}, ${f.issue}] ${f.state.padEnd(10)} ${t.matched}/${t.total} match (${pct}%)` + (t.tieTolerant ? `, ${t.tieTolerant} up to reference tie order` : '');
    });
    const all = [...summary.values()].reduce((a, t) => ({ matched: a.matched + t.matched, total: a.total + t.total }), { matched: 0, total: 0 });
    const text = [`golden-ext summary over ${scenariosRun} scenarios: ${all.matched}/${all.total} match`, ...rows].join('\n');
    console.log(text);
    if (report) appendFileSync(report, text + '\n');
  });

  for (const name of scenarios) {
    describe(name, () => {
      let svc: TestService;
      const golden = readGoldenExt<GoldenExtEntry[]>(`${name}.json`);
      beforeAll(async () => {
        // the chain id the reference ran with: network identifiers (Rosetta), address versions
        // the recorded stream delivered first (every message accepted): a copy of its imported database
        // (test/helpers/fixture-db.ts; test/conformance/conformance.test.ts replays each stream over HTTP)
        svc = await startTestService({ STACKS_CHAIN_ID: goldenExtNetwork(golden) }, name === '_empty-db' ? {} : { fixture: name });
        scenariosRun++;
      });
      afterAll(async () => svc?.stop());
      it('answers every golden-ext request of a must-match family like the reference', async () => {
        const failures = await runScenario(svc, golden, name);
        expect(failures).toEqual([]);
      });
    });
  }
});
