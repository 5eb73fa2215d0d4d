/**
 * The connections' pipeline depth (src/store/connect.ts MAX_PIPELINE): the projector sends a batch's statements
 * without waiting for their answers, and the driver holds back whatever exceeds this many in flight on a connection.
 * postgres.js takes the option without listing it in its types, so this checks that the pools run with it, and that
 * statements beyond the driver's default of 100 all go out behind one that has not answered yet.
 */
import { describe, expect, it } from 'vitest';
import { connectDatabase, MAX_PIPELINE } from '../../src/store/connect.js';
import { TEST_DATABASE_URL } from '../helpers/db.js';

describe('pipeline depth', () => {
  it(`the pools pipeline up to ${MAX_PIPELINE} statements per connection`, async () => {
    const db = await connectDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: '/nonexistent', max: 2 });
    try {
      expect((db.sql as unknown as { options: { max_pipeline: number } }).options.max_pipeline).toBe(MAX_PIPELINE);
      expect(MAX_PIPELINE).toBeGreaterThan(100);
      // 300 statements behind one that sleeps, in one transaction: all of them are written to the server while it
      // sleeps (the driver marks a statement it has written with the server's state), and answered in order
      let written = 0;
      const answers = await db.sql.begin(async (tx) => {
        const sleep = (s: number) => tx`SELECT pg_sleep(${s})`;
        const select = (i: number) => tx`SELECT ${i}::int AS i`;
        // a statement the connection has not described yet waits for its description before the next one goes
        await Promise.all([sleep(0), select(0)]);
        const sent = [sleep(0.5), ...Array.from({ length: 300 }, (_, i) => select(i))];
        const all = Promise.all(sent);
        await new Promise((r) => setTimeout(r, 200));
        written = sent.filter((q) => (q as unknown as { state?: unknown }).state).length;
        return all;
      });
      expect(written).toBe(301);
      expect((answers as unknown as { i?: number }[][]).slice(1).map((r) => r[0].i)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    } finally {
      await db.close();
    }
  });
});
