// API keys: random secrets shown once, stored as SHA-256 (sql/0006_auth.sql). A key is looked up by its hash;
// lookups are cached briefly per process, so a revocation reaches every api process within KEY_CACHE_MS.
import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../store/sql.js';
import { insertKey, keyByHash, touchKey } from '../store/api-keys.js';
import { PulseError } from '../errors.js';

export const KEY_CACHE_MS = 5_000;
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHE_ENTRIES = 10_000;

export interface ApiKeyInfo {
  name: string;
  /** Per-key requests per minute; null: the default (RATE_LIMIT_KEY_RPM); 0: unlimited. */
  rpm: number | null;
  revoked: boolean;
}

export class KeyError extends PulseError {}

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
  if (!(await insertKey(sql, name, hashKey(key), rpm ?? null))) throw new KeyError(`a key named "${name}" already exists (names stay taken after revocation)`);
  return { name, key };
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
      const row = await keyByHash(this.sql, hash);
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
    touchKey(this.sql, hash).then(
      () => {},
      () => {},
    );
  }
}
