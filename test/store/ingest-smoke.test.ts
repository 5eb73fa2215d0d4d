import { describe, it, expect } from 'vitest';
import pino from 'pino';
import { applied, testPipeline } from '../helpers/pipeline.js';
import { createTestDatabase } from '../helpers/db.js';
import { readFixture, fixtureNames } from '../helpers/fixtures.js';

describe('pipeline ingests every fixture', () => {
  for (const name of fixtureNames()) {
    it(name, async () => {
      const db = await createTestDatabase();
      const p = testPipeline(db.sql, pino({ level: 'warn' }));
      const t0 = Date.now();
      for (const l of readFixture(name)) {
        const r = await applied(p, l.path, l.body);
        expect(r, l.id + ' ' + l.path).toEqual({ status: 200, body: { result: 'ok' } });
      }
      const c = await db.sql`select (select count(*) from blocks)::int b, (select count(*) from txs)::int t, (select count(*) from events)::int e, (select count(*) from mempool_txs)::int m`;
      expect(c[0].b).toBeGreaterThan(0);
      await db.drop();
    });
  }
});
