/**
 * The acceptance test of the REST API: replay each recorded node stream into a fresh database through the observer,
 * then send every request the reference answered (fixtures/golden/<scenario>.json) and compare answer by answer.
 * CONFORMANCE_ONLY=<path prefix> narrows the requests (for development); CONFORMANCE_REPORT=<file> writes mismatches.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { appendFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { FIXTURES_DIR, fixtureNames, readFixture, readGolden } from '../helpers/fixtures.js';
import { startTestService, replay, type TestService } from '../helpers/service.js';
import { compareAnswer, goldenMempoolTxs, type GoldenEntry } from '../helpers/golden-compare.js';
import { fetchAnswerChecker } from '../helpers/openapi-validate.js';

const only = process.env.CONFORMANCE_ONLY;
const report = process.env.CONFORMANCE_REPORT;

async function runScenario(svc: TestService, golden: GoldenEntry[], label: string) {
  const entries = golden.filter((e) => !only || e.request.startsWith(only));
  const mempoolTxs = goldenMempoolTxs(golden);
  const failures: string[] = [];
  let tolerant = 0;
  // OpenAPI: every answer must also validate against what the served document publishes for its route.
  const checkAgainstOpenApi = await fetchAnswerChecker(svc.api);
  const schemaFailures: string[] = [];
  for (const e of entries) {
    const res = await fetch(svc.api + e.request, { redirect: 'manual' });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const r = compareAnswer(e, res.status, res.headers.get('location'), body, mempoolTxs);
    if (r.tieTolerant) tolerant++;
    if (!r.ok) failures.push(`${e.request} → ${r.reason}`);
    const schemaError = checkAgainstOpenApi('GET', e.request, res.status, body);
    if (schemaError) schemaFailures.push(`${e.request} → OpenAPI: ${schemaError}`);
  }
  const line = `${label}: ${entries.length - failures.length}/${entries.length} match` + (tolerant ? ` (${tolerant} up to reference tie order)` : '');
  console.log(line);
  if (schemaFailures.length) console.log(`${label}: ${schemaFailures.length} answers do not match the OpenAPI document`);
  if (report) appendFileSync(report, [line, ...failures.map((f) => '  ' + f), ...schemaFailures.map((f) => '  ' + f), ''].join('\n'));
  return [...failures, ...schemaFailures];
}

describe('REST conformance with the reference (golden answers)', () => {
  describe('empty database', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService();
    });
    afterAll(async () => svc?.stop());
    it('_empty-db', async () => {
      const failures = await runScenario(svc, readGolden<GoldenEntry[]>('_empty-db.json'), '_empty-db');
      expect(failures).toEqual([]);
    });
  });

  for (const name of fixtureNames().filter((n) => existsSync(path.join(FIXTURES_DIR, 'golden', `${n}.json`)))) {
    describe(name, () => {
      let svc: TestService;
      beforeAll(async () => {
        svc = await startTestService();
        const statuses = await replay(svc.observer, readFixture(name));
        expect(statuses.every((s) => s === 200)).toBe(true);
      });
      afterAll(async () => svc?.stop());
      it('answers every golden request like the reference', async () => {
        const failures = await runScenario(svc, readGolden<GoldenEntry[]>(`${name}.json`), name);
        expect(failures).toEqual([]);
      });
    });
  }
});
