import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from './sql.js';
import type { Logger } from 'pino';
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
 * The files of sql/functions, in the order `migrate` applies them. Each holds the current definition of the
 * functions, trigger functions and views of one area. A file comes after the files whose functions its LANGUAGE sql
 * functions and its views call (those are checked when created; a plpgsql body is resolved when it runs). A new file
 * is added here; a file of sql/functions not listed, or listed and absent, stops `migrate`.
 */
export const FUNCTION_FILES = [
  'bns.sql',
  'pox.sql',
  'burnchain.sql',
  'stx.sql',
  'principals.sql',
  'contracts.sql',
  'tokens.sql',
  'derived.sql',
  'mempool.sql',
  'projector.sql',
  'hooks.sql',
] as const;

/** Serialises concurrent migrators (two processes starting at once). */
const MIGRATION_LOCK = 7355608;

/** The numbered migrations of `dir` (NNNN_name.sql), in the order they are applied. */
export function migrationFiles(dir = sqlDir()): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_.*\.sql$/.test(f))
    .sort();
}

/** The functions files of `dir`/functions in the order they are applied (none when the folder is absent). */
export function functionFiles(dir = sqlDir()): string[] {
  let present: string[];
  try {
    present = readdirSync(path.join(dir, 'functions')).filter((f) => f.endsWith('.sql'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const listed = new Set<string>(FUNCTION_FILES);
  const unlisted = present.filter((f) => !listed.has(f));
  const absent = FUNCTION_FILES.filter((f) => !present.includes(f));
  if (unlisted.length || absent.length) {
    throw new Error(
      `sql/functions does not match FUNCTION_FILES (src/store/migrate.ts): ` +
        [unlisted.length ? `not listed: ${unlisted.join(', ')}` : '', absent.length ? `missing: ${absent.join(', ')}` : '']
          .filter(Boolean)
          .join('; '),
    );
  }
  return [...FUNCTION_FILES];
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Brings the database to the schema of `dir` (sql/):
 *
 * 1. every numbered migration sql/NNNN_*.sql not yet recorded in schema_migrations, in name order, each in its own
 *    transaction, recorded with the sha256 of its text. A migration recorded with a checksum that no longer matches
 *    its file is logged as a warning (it is never run again: an edit to it changes no database);
 * 2. every functions file (sql/functions, in FUNCTION_FILES order) whose sha256 differs from the one recorded in
 *    schema_functions, each in its own transaction; all of them when a migration was pending at step 1 (applied by
 *    this run or by a concurrent one), since an older migration may define a function with the body of its time;
 * 3. the indexes an interrupted bulk import left deferred (src/store/bulk-indexes.ts), unless `keepDeferredIndexes`
 *    (an import that defers them again).
 *
 * Returns what it applied: the migrations' file names, then `functions/<file>` for each functions file.
 */
export async function migrate(
  sql: Sql,
  dir = sqlDir(),
  opts: { keepDeferredIndexes?: boolean; log?: Pick<Logger, 'info' | 'warn'> } = {},
): Promise<string[]> {
  const log = opts.log ?? SILENT;
  const functions = functionFiles(dir);
  // The bookkeeping tables, under the lock too: two processes upgrading one database at once create them once.
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
    // Rows of migrations applied before checksums were kept have none, and are never warned about. (Looked up first:
    // the ALTER would lock the table against readiness checks on every start.)
    const [has] = await tx<{ n: number }[]>`
      SELECT count(*)::int AS n FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = 'schema_migrations' AND column_name = 'checksum'`;
    if (!has.n) await tx`ALTER TABLE schema_migrations ADD COLUMN checksum text`;
    await tx`CREATE TABLE IF NOT EXISTS schema_functions (
      file       text PRIMARY KEY,
      sha256     text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`;
  });

  const applied = new Map(
    (await sql<{ version: string; checksum: string | null }[]>`SELECT version, checksum FROM schema_migrations`).map((r) => [
      r.version,
      r.checksum,
    ]),
  );
  const done: string[] = [];
  // A migration pending when this run started, applied by this run or by another migrator meanwhile.
  let migrated = false;
  for (const file of migrationFiles(dir)) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    const checksum = sha256(text);
    if (applied.has(file)) {
      const recorded = applied.get(file);
      if (recorded && recorded !== checksum) {
        log.warn(
          { migration: file },
          `migration sql/${file} changed since it was applied to this database; the change has no effect here ` +
            '(a change is a new migration, or for a function its file in sql/functions)',
        );
      }
      continue;
    }
    migrated = true;
    const ran = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      const again = await tx`SELECT 1 FROM schema_migrations WHERE version = ${file}`;
      if (again.length) return false;
      await tx.unsafe(text);
      await tx`INSERT INTO schema_migrations (version, checksum) VALUES (${file}, ${checksum})`;
      return true;
    });
    if (ran) done.push(file);
  }

  const recordedFunctions = new Map(
    (await sql<{ file: string; sha256: string }[]>`SELECT file, sha256 FROM schema_functions`).map((r) => [r.file, r.sha256]),
  );
  for (const file of functions) {
    const text = readFileSync(path.join(dir, 'functions', file), 'utf8');
    const checksum = sha256(text);
    if (!migrated && recordedFunctions.get(file) === checksum) continue;
    const ran = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      if (!migrated) {
        const [row] = await tx<{ sha256: string }[]>`SELECT sha256 FROM schema_functions WHERE file = ${file}`;
        if (row?.sha256 === checksum) return false;
      }
      await tx.unsafe(text);
      await tx`
        INSERT INTO schema_functions (file, sha256) VALUES (${file}, ${checksum})
        ON CONFLICT (file) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now()`;
      return true;
    });
    if (ran) done.push(`functions/${file}`);
  }

  if (!opts.keepDeferredIndexes) await restoreLeftoverIndexes(sql, log);
  return done;
}

const SILENT = { info: () => undefined, warn: () => undefined };

/** How many of these migration files the database records as applied (readiness checks). */
export async function appliedMigrationCount(sql: Sql, versions: string[]): Promise<number> {
  const [r] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM schema_migrations WHERE version = ANY(${versions})`;
  return r.n;
}
