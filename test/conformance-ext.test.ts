/**
 * Conformance with the reference for the endpoint families being added (fixtures/golden-ext): replay each recorded node
 * stream into a fresh service, send every request the reference answered there (GET, and POST with its JSON body) and
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
import { FIXTURES_DIR, goldenExtNames, readFixture, readGoldenExt } from './helpers/fixtures.js';
import { startTestService, replay, type TestService } from './helpers/service.js';
import { compareExtAnswer, extRequest, goldenExtContext, type ExtAnswer, type ExtRequest, type GoldenExtEntry } from './helpers/golden-compare.js';
import { ENDPOINT_FAMILIES, familyOf, type EndpointFamily } from './helpers/golden-families.js';
import { fetchAnswerChecker, type AnswerCheck } from './helpers/openapi-validate.js';

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

async function send(api: string, req: ExtRequest): Promise<ExtAnswer> {
  const init: RequestInit = { method: req.method, redirect: 'manual' };
  if (req.method !== 'GET') {
    init.headers = { 'content-type': 'application/json' };
    init.body = JSON.stringify(req.body);
  }
  const res = await fetch(api + req.path, init);
  const text = await res.text();
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
  const failures: string[] = [];
  const planned: { e: GoldenExtEntry; req: ExtRequest; family: EndpointFamily }[] = [];
  for (const e of entries) {
    const req = extRequest(e);
    const hit = familyOf(req.method, req.path);
    if (hit.family) planned.push({ e, req, family: hit.family });
    else failures.push(`${label}: ${hit.error}`);
  }
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
      for (const x of bad) failures.push(`${label} [${f.name}] ${describeRequest(x.req)} → ${x.r.reason}`);
      for (const x of schemaBad) failures.push(`${label} [${f.name}] ${describeRequest(x.req)} → OpenAPI: ${x.schemaError}`);
    }
  }
  console.log(lines.join('\n'));
  if (report) appendFileSync(report, [...lines, ...failures.filter((f) => f.includes('no endpoint family') || f.includes('several families')), ...mismatches, ''].join('\n'));
  return failures;
}

const scenarios = goldenExtNames().filter((n) => n === '_empty-db' || existsSync(path.join(FIXTURES_DIR, 'events', `${n}.tsv`)));

describe('REST conformance with the reference for the families being added (golden-ext answers)', () => {
  afterAll(() => {
    const rows = ENDPOINT_FAMILIES.filter((f) => summary.get(f.name)!.total > 0).map((f) => {
      const t = summary.get(f.name)!;
      const pct = Math.floor((100 * t.matched) / t.total);
      return `  ${f.name.padEnd(18)} [${f.capability}, ${f.issue}] ${f.state.padEnd(10)} ${t.matched}/${t.total} match (${pct}%)` + (t.tieTolerant ? `, ${t.tieTolerant} up to reference tie order` : '');
    });
    const all = [...summary.values()].reduce((a, t) => ({ matched: a.matched + t.matched, total: a.total + t.total }), { matched: 0, total: 0 });
    const text = [`golden-ext summary over ${scenarios.length} scenarios: ${all.matched}/${all.total} match`, ...rows].join('\n');
    console.log(text);
    if (report) appendFileSync(report, text + '\n');
  });

  for (const name of scenarios) {
    describe(name, () => {
      let svc: TestService;
      beforeAll(async () => {
        svc = await startTestService();
        if (name !== '_empty-db') {
          const statuses = await replay(svc.observer, readFixture(name));
          expect(statuses.every((s) => s === 200)).toBe(true);
        }
      });
      afterAll(async () => svc?.stop());
      it('answers every golden-ext request of a must-match family like the reference', async () => {
        const failures = await runScenario(svc, readGoldenExt<GoldenExtEntry[]>(`${name}.json`), name);
        expect(failures).toEqual([]);
      });
    });
  }
});
