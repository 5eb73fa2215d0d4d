/**
 * Readiness of an api process (GET /ready) and the guard that keeps its REST reads from serving a replica that is too
 * far behind. Checks: migrations applied and the database reachable (the primary), the read replica reachable and
 * within REPLICA_MAX_LAG_MS (when DATABASE_READ_URL is set), Redis connected (when REDIS_URL is set).
 */
import { readdirSync } from 'node:fs';
import type { Sql } from '../store/sql.js';
import type { ReplicaMonitor } from '../store/replica.js';
import { appliedMigrationCount, sqlDir } from '../store/migrate.js';
import type { Router } from '../http/router.js';
import { httpError } from '../http/response.js';
import { isStaticAsset } from '../auth/access.js';

export interface ReadinessCheck {
  ok: boolean;
  /** why it failed, or what it measured */
  message?: string;
  /** replica only: milliseconds behind the primary (null when unknown) */
  lag_ms?: number | null;
}

export interface ReadinessReport {
  status: 'ready' | 'not ready';
  /** names of the failed checks */
  failed: string[];
  checks: Record<string, ReadinessCheck>;
}

export interface ReadinessDeps {
  /** the primary (DATABASE_URL) */
  sql: Sql;
  replica?: ReplicaMonitor;
  /** undefined: Redis is not configured */
  redisReady?: () => boolean | undefined;
  /** a check that takes longer fails (default 2000 ms) */
  timeoutMs?: number;
}

/** Paths that never read the chain: answered whatever the replica's state. */
export function isHealthPath(path: string): boolean {
  return path === '/health' || path === '/ready';
}

export class Readiness {
  private readonly migrations: string[];
  constructor(private readonly deps: ReadinessDeps) {
    this.migrations = readdirSync(sqlDir()).filter((f) => /^\d{4}_.*\.sql$/.test(f));
  }

  async report(): Promise<ReadinessReport> {
    const checks: Record<string, ReadinessCheck> = {};
    const timeout = this.deps.timeoutMs ?? 2000;
    try {
      const applied = await withTimeout(appliedMigrationCount(this.deps.sql, this.migrations), timeout);
      checks.database = { ok: true };
      const missing = this.migrations.length - applied;
      checks.migrations = missing === 0 ? { ok: true } : { ok: false, message: `${missing} migration(s) not applied; run \`stacks-pulse migrate\`` };
    } catch (err) {
      checks.database = { ok: false, message: `database unreachable: ${err instanceof Error ? err.message : String(err)}` };
      checks.migrations = { ok: false, message: 'unknown: the database is unreachable' };
    }
    if (this.deps.replica) {
      const st = this.deps.replica.status();
      checks.replica = st.ok ? { ok: true, lag_ms: st.lagMs } : { ok: false, message: st.reason, lag_ms: st.lagMs };
    }
    const redis = this.deps.redisReady?.();
    if (redis !== undefined) checks.redis = redis ? { ok: true } : { ok: false, message: 'Redis unreachable (push messages cannot reach this process)' };
    const failed = Object.keys(checks).filter((k) => !checks[k].ok);
    return { status: failed.length ? 'not ready' : 'ready', failed, checks };
  }

  /**
   * Answers REST reads 503 while the replica is unreachable or past its lag bound (never stale data past the bound);
   * the health routes and static pages are served regardless. Install before the rate limits and the cache.
   */
  installReplicaGuard(router: Router): void {
    const replica = this.deps.replica;
    if (!replica) return;
    router.onRequest((req) => {
      if (isHealthPath(req.path) || isStaticAsset(req.path)) return;
      const st = replica.status();
      if (st.ok) return;
      return httpError(503, `${st.reason ?? 'read replica unavailable'}; try again later`, undefined, { 'retry-after': 1 });
    });
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}
