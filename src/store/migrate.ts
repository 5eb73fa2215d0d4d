import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from './connect.js';
import type { Logger } from '../logger.js';
import { restoreLeftoverIndexes } from './bulk-indexes.js';

/** The sql/ folder at the repository root (works from src/ under tsx/vitest and from dist/src/). */
export function sqlDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..']) {
    const dir = path.resolve(here, up, 'sql');
    try {
      readdirSync(dir);
      return dir;
    } catch {
      /* try the next */
    }
  }
  throw new Error(`sql/ migrations folder not found from ${here}`);
}

/**
 * Applies every sql/NNNN_*.sql not yet recorded in schema_migrations, each in its own transaction; then creates the
 * indexes an interrupted bulk import left deferred (src/store/bulk-indexes.ts), unless `keepDeferredIndexes` (an
 * import that defers them again).
 */
export async function migrate(
  sql: Sql,
  dir = sqlDir(),
  opts: { keepDeferredIndexes?: boolean; log?: Pick<Logger, 'info' | 'warn'> } = {},
): Promise<string[]> {
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_.*\.sql$/.test(f))
    .sort();
  const applied = new Set((await sql<{ version: string }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
  const done: string[] = [];
  for (const file of files) {
    if (applied.has(file)) continue;
    const text = readFileSync(path.join(dir, file), 'utf8');
    await sql.begin(async (tx) => {
      // Serialise concurrent migrators (two processes starting at once).
      await tx`SELECT pg_advisory_xact_lock(7355608)`;
      const again = await tx`SELECT 1 FROM schema_migrations WHERE version = ${file}`;
      if (again.length) return;
      await tx.unsafe(text);
      await tx`INSERT INTO schema_migrations (version) VALUES (${file})`;
    });
    done.push(file);
  }
  if (!opts.keepDeferredIndexes) await restoreLeftoverIndexes(sql, opts.log ?? SILENT);
  return done;
}

const SILENT = { info: () => undefined, warn: () => undefined };

/** How many of these migration files the database records as applied (readiness checks). */
export async function appliedMigrationCount(sql: Sql, versions: string[]): Promise<number> {
  const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM schema_migrations WHERE version = ANY(${versions})`;
  return r.n;
}
