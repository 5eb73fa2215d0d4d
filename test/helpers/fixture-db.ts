// Imported fixture databases: a recorded stream replayed once per run (or less), copied by every test that only
// needs its result. Replaying a fixture message by message costs tens of seconds on a busy machine; a copy
// (CREATE DATABASE … TEMPLATE) costs about a second.
import postgres from 'postgres';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { connectDatabase } from '../../src/store/connect.js';
import { migrate } from '../../src/store/migrate.js';
import { ObserverPipeline } from '../../src/observer/pipeline.js';
import { createLogger } from '../../src/logger.js';
import { REPO_ROOT } from './build.js';
import { FIXTURES_DIR, readFixture } from './fixtures.js';
import { copyTemplate, createTestDatabase, ensureTemplate, TEST_DATABASE_URL, withDatabase, type TestDatabase } from './db.js';

/** Every file under `dir`, sorted, as [relative path, content] pairs fed to `h`. */
function hashTree(h: ReturnType<typeof createHash>, dir: string, rel = ''): void {
  for (const name of readdirSync(path.join(dir, rel)).sort()) {
    const p = path.join(rel, name);
    if (statSync(path.join(dir, p)).isDirectory()) hashTree(h, dir, p);
    else h.update(p).update('\0').update(readFileSync(path.join(dir, p))).update('\0');
  }
}

let codeHash: string | undefined;

/**
 * The name of `fixture`'s imported template: a hash of the fixture file, of every file of src/ and sql/ (the code
 * that turns messages into rows) and of how it is imported. Changed code or a changed fixture gets a template of its
 * own, never a stale one; two suites running at once on the same tree share one.
 */
export function fixtureTemplateName(fixture: string): string {
  if (codeHash === undefined) {
    const h = createHash('sha256');
    h.update('pipeline, one message at a time, each applied before the next\0');
    for (const d of ['src', 'sql']) hashTree(h, path.join(REPO_ROOT, d));
    codeHash = h.digest('hex');
  }
  const h = createHash('sha256').update(codeHash).update('\0').update(fixture).update('\0');
  h.update(readFileSync(path.join(FIXTURES_DIR, 'events', `${fixture}.tsv`)));
  return `sp_fix_${h.digest('hex').slice(0, 20)}`;
}

// An advisory lock namespace of its own (the migrated template uses 735_560_801 alone): one key per fixture template.
const FIXTURE_LOCK = 735_560_802;
/** The comment a fixture template carries: when it was built (global setup drops old ones). */
export const FIXTURE_COMMENT = 'stacks-pulse test fixture template, built ';

const ensured = new Map<string, Promise<string>>();

/**
 * Makes sure `fixture`'s imported template exists and returns its name: a copy of the migrated template with the
 * fixture delivered through the observer pipeline in this process, every message applied before the next, each one
 * required to be accepted (200). Built under an advisory lock (several workers, or two suites, may ask at once) into a
 * scratch name renamed when complete, so a template that exists is complete and nobody is connected to it.
 */
export function ensureFixtureTemplate(fixture: string): Promise<string> {
  let p = ensured.get(fixture);
  if (!p) {
    p = buildFixtureTemplate(fixture).catch((err) => {
      ensured.delete(fixture);
      throw err;
    });
    ensured.set(fixture, p);
  }
  return p;
}

async function buildFixtureTemplate(fixture: string): Promise<string> {
  const name = fixtureTemplateName(fixture);
  const base = await ensureTemplate();
  const a = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  const key = parseInt(name.slice(-8), 16) | 0;
  try {
    const exists = async () => (await a`SELECT 1 FROM pg_database WHERE datname = ${name}`).length > 0;
    if (await exists()) return name;
    await a`SELECT pg_advisory_lock(${FIXTURE_LOCK}, ${key})`;
    try {
      if (await exists()) return name;
      const scratch = `${name}_build_${randomBytes(3).toString('hex')}`;
      await copyTemplate(a, scratch, base);
      try {
        const db = await connectDatabase({ databaseUrl: withDatabase(TEST_DATABASE_URL, scratch), dataDir: '/nonexistent', max: 4 });
        try {
          await migrate(db.sql);
          const pipeline = new ObserverPipeline(db.sql, createLogger('silent'));
          try {
            for (const l of readFixture(fixture)) {
              const r = await pipeline.handle(l.path, l.body);
              await pipeline.idle();
              if (r.status !== 200) throw new Error(`${fixture} ${l.id} ${l.path}: ${r.status} ${JSON.stringify(r.body)}`);
            }
          } finally {
            await pipeline.stop();
          }
        } finally {
          await db.close();
        }
        await a.unsafe(`ALTER DATABASE ${scratch} RENAME TO ${name}`);
        await a.unsafe(`COMMENT ON DATABASE ${name} IS '${FIXTURE_COMMENT}${new Date().toISOString()}'`);
      } catch (err) {
        await a.unsafe(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
        throw err;
      }
      return name;
    } finally {
      await a`SELECT pg_advisory_unlock(${FIXTURE_LOCK}, ${key})`;
    }
  } finally {
    await a.end();
  }
}

/**
 * A fresh database holding `fixture` as the observer pipeline leaves it after delivering every message in order (a
 * copy of its imported template); drop() removes it.
 */
export async function createFixtureDatabase(fixture: string, prefix = 'sp_test'): Promise<TestDatabase> {
  return createTestDatabase(prefix, { template: await ensureFixtureTemplate(fixture) });
}

/** Drops fixture templates built more than `maxAgeMs` ago (ones in use by a running suite are left alone). */
export async function dropOldFixtureTemplates(maxAgeMs = 24 * 3600_000): Promise<void> {
  const a = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    const rows = await a<{ datname: string; comment: string | null }[]>`
      SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname LIKE 'sp\\_fix\\_%'`;
    for (const r of rows) {
      const built = r.comment?.startsWith(FIXTURE_COMMENT) ? Date.parse(r.comment.slice(FIXTURE_COMMENT.length)) : NaN;
      // a scratch database of a build in progress has no comment yet: left to its builder
      if (Number.isNaN(built) || Date.now() - built < maxAgeMs) continue;
      await a.unsafe(`DROP DATABASE IF EXISTS ${r.datname}`).catch(() => undefined);
    }
  } finally {
    await a.end();
  }
}
