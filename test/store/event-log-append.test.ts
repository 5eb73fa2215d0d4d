/**
 * Appending to the durable log (src/store/event-log.ts appendToLog): ids follow the entries' order, a message logged
 * before or repeated within the same call gets no id, and every body is stored exactly as it came (JSON full of
 * quotes, backslashes, tabs, newlines and non-ASCII text), whether the statement carries each value as a parameter of
 * its own or, for very large calls, as arrays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { appendToLog, type AppendEntry } from '../../src/store/event-log.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('sp_append');
});

afterAll(async () => {
  await db?.drop();
});

const awkward = (i: number) =>
  JSON.stringify({ i, s: `quote " backslash \\ tab \t newline \n cr \r unicode ☃ é 𝄞 braces {} [] , ;`, hex: '0x' + 'ab'.repeat(i % 50) });

async function stored(ids: number[]): Promise<Map<number, { path: string; body: string; at: number }>> {
  const rows = await db.sql<{ id: string; path: string; body: string; at: number }[]>`
    SELECT id::text AS id, path, body, extract(epoch FROM received_at)::float8 * 1000 AS at
    FROM event_log WHERE id = ANY(${ids.map(String)}::bigint[])`;
  return new Map(rows.map((r) => [Number(r.id), { path: r.path, body: r.body, at: Number(r.at) }]));
}

describe('appendToLog', () => {
  it('keeps order and bodies; a repeat in the call and a message logged before get no id', async () => {
    const t0 = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
    const first: AppendEntry[] = [{ path: '/new_burn_block', body: awkward(0), receivedAt: t0 }];
    const [before] = await appendToLog(db.sql, first);
    expect(before).toBeTypeOf('number');
    const entries: AppendEntry[] = [
      { path: '/new_block', body: awkward(1), receivedAt: t0 + 1 },
      first[0], // logged before
      { path: '/new_mempool_tx', body: awkward(2), receivedAt: t0 + 2 },
      { path: '/new_block', body: awkward(1), receivedAt: t0 + 3 }, // the same message again in this call
      { path: '/new_mempool_tx', body: awkward(1), receivedAt: t0 + 4 }, // same body, another path: a message of its own
    ];
    const ids = await appendToLog(db.sql, entries);
    expect(ids.map((x) => x === null)).toEqual([false, true, false, true, false]);
    const got = ids.filter((x): x is number => x !== null);
    expect([...got].sort((a, b) => a - b)).toEqual(got); // ascending in the entries' order
    expect(got[0]).toBeGreaterThan(before!);
    const rows = await stored(got);
    expect(got.map((id) => rows.get(id))).toEqual(
      [entries[0], entries[2], entries[4]].map((e) => ({ path: e.path, body: e.body, at: e.receivedAt })),
    );
  });

  it('a call too large for one parameter per value stores the same', async () => {
    const n = 10_050;
    const entries: AppendEntry[] = Array.from({ length: n }, (_, i) => ({
      path: '/new_mempool_tx',
      body: awkward(1000 + i),
      receivedAt: Date.UTC(2024, 5, 1) + i,
    }));
    entries.push(entries[7]); // a repeat at the end
    const ids = await appendToLog(db.sql, entries);
    expect(ids.at(-1)).toBeNull();
    const got = ids.slice(0, n) as number[];
    expect(got.every((x) => typeof x === 'number')).toBe(true);
    expect([...got].sort((a, b) => a - b)).toEqual(got);
    const rows = await stored([got[0], got[4321], got[n - 1]]);
    expect([0, 4321, n - 1].map((i) => rows.get(got[i])?.body)).toEqual([0, 4321, n - 1].map((i) => entries[i].body));
  });
});
