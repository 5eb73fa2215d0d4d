// Derived tables (balances, counts, indexes the ingest keeps up to date) checked against the same figures recomputed
// from the base tables: after a recorded stream, after it is delivered again, after every block of a generated chain,
// and after the migration's backfill rebuilt them. One description of the table, one set of checks.
import { expect } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Sql } from '../../src/store/sql.js';
import { sqlDir } from '../../src/store/migrate.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { ChainSummary, GeneratedMessage, GeneratorOptions } from '../../load/generator/types.js';
import { emptyChainTables } from './db.js';
import { readFixture } from './fixtures.js';
import { applied, testPipeline } from './pipeline.js';

/** A maintained table (or several, read together) and how to compute the same figures from scratch. */
export interface DerivedTable<T> {
  /** what is compared, for failure messages */
  name: string;
  /** the maintained rows, as comparable values (lines, records) */
  read(sql: Sql): Promise<T>;
  /** the same figures computed from the base tables, independently of the maintained ones */
  recompute(sql: Sql): Promise<T>;
  /** empties the maintained table(s) and rebuilds them as the migration's backfill does, from what is stored */
  backfill?(sql: Sql): Promise<void>;
}

/**
 * A backfill as the migrations run it: empties `tables`, then runs the migration files named (sql/, in the order given:
 * the one that fills the tables, then any later one that replaces a function or trigger it defines again).
 */
export function migrationBackfill(tables: string[], files: string[]): (sql: Sql) => Promise<void> {
  return async (sql) => {
    await sql.unsafe(`TRUNCATE ${tables.join(', ')}`);
    for (const f of files) await sql.unsafe(readFileSync(path.join(sqlDir(), f), 'utf8'));
  };
}

/** Asserts that the maintained figures equal the recomputed ones; returns the maintained ones. */
export async function expectMaintainedEqualsRecomputed<T>(sql: Sql, table: DerivedTable<T>, label = ''): Promise<T> {
  const maintained = await table.read(sql);
  expect(maintained, `${table.name}${label ? `, ${label}` : ''}: maintained = recomputed`).toEqual(await table.recompute(sql));
  return maintained;
}

/** Runs the table's backfill and asserts that it rebuilds `expected` (by default: what the table holds now). */
export async function expectBackfillEquals<T>(sql: Sql, table: DerivedTable<T>, expected?: T): Promise<T> {
  if (!table.backfill) throw new Error(`${table.name} has no backfill`);
  const want = expected ?? (await table.read(sql));
  await table.backfill(sql);
  const rebuilt = await table.read(sql);
  expect(rebuilt, `${table.name}: the backfill equals the ingest`).toEqual(want);
  return rebuilt;
}

/**
 * A recorded stream into an emptied database through the observer pipeline (every message accepted and applied before
 * the next): the maintained figures equal the recomputed ones; with `redeliver` (default), the whole stream delivered
 * again changes nothing (and they still equal the recomputed ones); with `backfill` (default: when the table has one), the backfill rebuilds the same figures.
 * Returns the maintained figures.
 */
export async function checkOnFixture<T>(
  sql: Sql,
  log: Logger,
  fixture: string,
  table: DerivedTable<T>,
  opts: { redeliver?: boolean; backfill?: boolean } = {},
): Promise<T> {
  await emptyChainTables(sql);
  const lines = readFixture(fixture);
  const pipeline = testPipeline(sql, log);
  for (const l of lines) expect((await applied(pipeline, l.path, l.body)).status, `${fixture} ${l.id} ${l.path}`).toBe(200);
  const once = await expectMaintainedEqualsRecomputed(sql, table, fixture);
  if (opts.redeliver ?? true) {
    for (const l of lines) expect((await applied(pipeline, l.path, l.body)).status, `${fixture} ${l.id} again`).toBe(200);
    expect(await table.read(sql), `${table.name}, ${fixture}: unchanged by a re-delivery`).toEqual(once);
    await expectMaintainedEqualsRecomputed(sql, table, `${fixture} (again)`);
  }
  if (opts.backfill ?? table.backfill !== undefined) await expectBackfillEquals(sql, table, once);
  return once;
}

export interface GeneratedChainCheck {
  /** the generator's chain */
  summary: ChainSummary;
  /** how many times the figures were compared */
  checks: number;
}

/**
 * A generated chain (load/generator/) into an emptied database through the observer pipeline, message by message:
 * after every message whose path is in `after` (default: /new_block), the maintained figures equal the recomputed
 * ones. `body` rewrites a message before it is delivered; `onMessage` runs after each one is applied (before the
 * comparison), for checks of the caller's own.
 */
export async function checkOnGeneratedChain<T>(
  sql: Sql,
  log: Logger,
  generator: GeneratorOptions,
  table: DerivedTable<T>,
  opts: { after?: string[]; body?: (m: GeneratedMessage) => string; onMessage?: (m: GeneratedMessage) => Promise<void> } = {},
): Promise<GeneratedChainCheck> {
  await emptyChainTables(sql);
  const pipeline = testPipeline(sql, log);
  const gen = new ChainGenerator(generator);
  const after = opts.after ?? ['/new_block'];
  let checks = 0;
  let n = 0;
  for await (const m of gen.messages()) {
    n++;
    expect((await applied(pipeline, m.path, opts.body ? opts.body(m) : m.body)).status, `message ${n} (${m.path})`).toBe(200);
    await opts.onMessage?.(m);
    if (!after.includes(m.path)) continue;
    checks++;
    await expectMaintainedEqualsRecomputed(sql, table, `after message ${n} (${m.path})`);
  }
  const summary = gen.summary();
  // the point of a generated chain: forks took rows out of the maintained tables again
  if (generator.forks) expect(summary.orphanedBlocks, `${table.name}: the generated chain orphaned blocks`).toBeGreaterThan(0);
  return { summary, checks };
}
