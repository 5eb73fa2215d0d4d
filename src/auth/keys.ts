// API keys: random secrets shown once, stored as SHA-256 (sql/0006_auth.sql). A key is looked up by its hash;
// lookups are cached briefly per process, so a revocation reaches every api process within KEY_CACHE_MS.
import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../store/connect.js';

export const KEY_CACHE_MS = 5_000;
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHE_ENTRIES = 10_000;

export interface ApiKeyInfo {
  name: string;
  /** Per-key requests per minute; null: the default (RATE_LIMIT_KEY_RPM); 0: unlimited. */
  rpm: number | null;
  revoked: boolean;
}

export interface ApiKeyRow {
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  rpm: number | null;
  revoked_at: Date | null;
}

export class KeyError extends Error {}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A new random key: `sp_` + 43 base64url characters (256 bits). */
export function generateKey(): string {
  return 'sp_' + randomBytes(32).toString('base64url');
}

/** Lower-case hex SHA-256 of the key as sent in x-api-key. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function checkKeyName(name: string): void {
  if (!NAME_RE.test(name)) throw new KeyError(`invalid key name "${name}": 1-64 characters A-Z a-z 0-9 . _ -, starting with a letter or digit`);
}

/** Stores a new key; returns the key in clear (the only time it exists outside the client). */
export async function createKey(sql: Sql, name: string, rpm?: number | null): Promise<{ name: string; key: string }> {
  checkKeyName(name);
  if (rpm !== undefined && rpm !== null && (!Number.isSafeInteger(rpm) || rpm < 0)) {
    throw new KeyError(`invalid rpm ${rpm}: expected a non-negative integer`);
  }
  const key = generateKey();
  const rows = await sql`
    INSERT INTO api_keys (name, key_hash, rpm) VALUES (${name}, ${hashKey(key)}, ${rpm ?? null})
    ON CONFLICT (name) DO NOTHING RETURNING name`;
  if (rows.length === 0) throw new KeyError(`a key named "${name}" already exists (names stay taken after revocation)`);
  return { name, key };
}

export async function listKeys(sql: Sql): Promise<ApiKeyRow[]> {
  return sql<ApiKeyRow[]>`
    SELECT name, created_at, last_used_at, rpm, revoked_at FROM api_keys ORDER BY created_at, id`;
}

/** Revokes the key named `name`; false when there is no such key or it was already revoked. */
export async function revokeKey(sql: Sql, name: string): Promise<boolean> {
  const rows = await sql`UPDATE api_keys SET revoked_at = now() WHERE name = ${name} AND revoked_at IS NULL RETURNING name`;
  return rows.length > 0;
}

interface CacheEntry {
  info: ApiKeyInfo | undefined;
  expires: number;
}

/** Looks keys up by hash with a short per-process cache (hits and misses), and records last use. */
export class KeyStore {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly touched = new Map<string, number>();
  private readonly cacheMs: number;

  constructor(
    private readonly sql: Sql,
    opts: { cacheMs?: number } = {},
  ) {
    this.cacheMs = opts.cacheMs ?? KEY_CACHE_MS;
  }

  /** undefined: unknown key. A revoked key comes back with revoked: true. */
  async lookup(key: string): Promise<ApiKeyInfo | undefined> {
    const hash = hashKey(key);
    const now = Date.now();
    const hit = this.cache.get(hash);
    let info: ApiKeyInfo | undefined;
    if (hit && hit.expires > now) {
      info = hit.info;
    } else {
      const [row] = await this.sql<{ name: string; rpm: number | null; revoked: boolean }[]>`
        SELECT name, rpm, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE key_hash = ${hash}`;
      info = row ? { name: row.name, rpm: row.rpm, revoked: row.revoked } : undefined;
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
      this.cache.set(hash, { info, expires: now + this.cacheMs });
    }
    if (info && !info.revoked) this.touch(hash, now);
    return info;
  }

  /** Updates last_used_at at most once a minute per key and process; failures are ignored. */
  private touch(hash: string, now: number): void {
    const last = this.touched.get(hash);
    if (last !== undefined && now - last < TOUCH_INTERVAL_MS) return;
    if (this.touched.size >= MAX_CACHE_ENTRIES) this.touched.clear();
    this.touched.set(hash, now);
    this.sql`UPDATE api_keys SET last_used_at = now() WHERE key_hash = ${hash}`.then(
      () => {},
      () => {},
    );
  }
}
