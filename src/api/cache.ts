/**
 * HTTP caching for the REST API: ETag / If-None-Match on every answer that is a function of the chain state, and an
 * in-memory cache of answers keyed by URL and chain version.
 *
 * The chain version. `cache_version` (sql/0007_cache.sql) holds a per-database random token and a counter that a
 * deferred trigger bumps in the COMMIT of every stored observer message, whatever process stored it. The version is
 * visible atomically with the rows it describes. Each cacheable request reads it (one tiny primary-key query) BEFORE
 * its data, so:
 *   - ETag = `"<token>-<version>"`: the data sent is at least as new as the tag; a client holding that tag gets a 304
 *     only while no message has been committed since — never a stale answer;
 *   - a stored answer is served only when its version equals the version read for this request; a request that
 *     arrives after a COMMIT always reads the new version, so it can never get the answer of before the COMMIT.
 * Requests that are neither conditional nor hot skip the read: they are tagged with the last version this process
 * read, which is never newer than their data (see onRequest).
 * Version reads are single-flight: a request joins the next query that STARTS after it arrived (never one already in
 * flight, which could predate a commit the client already knows about), so under load one query serves a whole batch.
 *
 * In-process invalidation: `invalidate()` (wired to ObserverPipeline.onCommitted in the same process) drops the hot
 * entries at once and marks answers being computed as not storable (they may have read the data of before the
 * commit under the old version). Other processes rely on the version check alone.
 */
import type { Router, HttpRequest } from '../http/router.js';
import type { HttpResponse } from '../http/response.js';
import type { Sql } from '../store/sql.js';
import { allEndpoints } from './endpoints.js';
import { chainVersion } from '../store/cache-version.js';

/** Routes whose answers depend only on the database's chain/mempool state (and the request): every declared endpoint
 * whose cache policy is not 'none' (src/api/endpoint.ts). */
export const ETAG_ROUTES: ReadonlySet<string> = new Set(
  allEndpoints().filter((e) => e.cachePolicy !== 'none').map((e) => e.path),
);

/**
 * Answers kept in memory, keyed by URL and valid for one chain version: every ETag route (any page, any parameters).
 * Between two commits every such answer is a function of the URL alone, so a repeated lookup (a popular tx, a
 * polled address, an explorer's first pages) costs one shared version read instead of its queries and serialisation.
 * Bounded by entries and bytes; the oldest entries go first.
 */
const STORED_ROUTES: ReadonlySet<string> = ETAG_ROUTES;

/** As the reference: clients may store the answer but must revalidate it (If-None-Match) before each use. */
export const CACHE_CONTROL = 'public, no-cache, must-revalidate';

export interface ChainVersion {
  token: string;
  version: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  notModified: number;
  versionQueries: number;
  invalidations: number;
  entries: number;
}

export interface ApiCacheOptions {
  /** Max answers (distinct URLs) kept at once; default 4096. */
  maxEntries?: number;
  /** Max bytes of answers kept at once; default 64 MiB. */
  maxBytes?: number;
}

interface Entry {
  version: number;
  token: string;
  response: HttpResponse;
  bytes: number;
}

/** What the request hook leaves for the response hook in req.locals. */
interface CacheLocals {
  etag: string;
  version: ChainVersion;
  /** hot-cache key, when this request's answer may be stored */
  key?: string;
  /** invalidation epoch when the request started */
  epoch: number;
}

const LOCALS_KEY = 'apiCache';

export class ApiCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private bytes = 0;
  private epoch = 0;
  private running: Promise<ChainVersion> | undefined;
  private queued: Promise<ChainVersion> | undefined;
  /** the newest version any query returned (committed, so visible to every later read) */
  private lastKnown: ChainVersion | undefined;
  private readonly counters = { hits: 0, misses: 0, notModified: 0, versionQueries: 0, invalidations: 0 };

  constructor(
    private readonly sql: Sql,
    opts: ApiCacheOptions = {},
  ) {
    this.maxEntries = opts.maxEntries ?? 4096;
    this.maxBytes = opts.maxBytes ?? 64 * 1024 * 1024;
  }

  /**
   * The current chain version, read from the database by a query that starts after this call (single-flight: calls
   * made while a query is in flight share the next one).
   */
  version(): Promise<ChainVersion> {
    if (!this.running) {
      const p = this.fetchVersion();
      this.running = p;
      const clear = () => {
        if (this.running === p) this.running = undefined;
      };
      p.then(clear, clear);
      return p;
    }
    if (!this.queued) {
      const q = this.running.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        this.queued = undefined;
        return this.version();
      });
      this.queued = q;
    }
    return this.queued;
  }

  /** Drops every hot entry (a block or mempool message was committed in this process). */
  invalidate(): void {
    this.epoch++;
    this.counters.invalidations++;
    this.entries.clear();
    this.bytes = 0;
  }

  stats(): CacheStats & { bytes: number } {
    return { ...this.counters, entries: this.entries.size, bytes: this.bytes };
  }

  /** Registers the hooks. Register it after any authentication / rate-limit hook: a hit short-circuits the rest. */
  install(router: Router): void {
    router.onRequest((req) => this.onRequest(req));
    router.onResponse((req, res) => this.onResponse(req, res));
  }

  private async fetchVersion(): Promise<ChainVersion> {
    this.counters.versionQueries++;
    const v = await chainVersion(this.sql);
    if (!this.lastKnown || this.lastKnown.token !== v.token || this.lastKnown.version < v.version) this.lastKnown = v;
    return v;
  }

  /** Request hook: 304 when If-None-Match holds the current tag, a hot answer when one is stored for this version. */
  async onRequest(req: HttpRequest): Promise<HttpResponse | void> {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !req.route || !ETAG_ROUTES.has(req.route)) return;
    const epoch = this.epoch;
    const inm = req.headers['if-none-match'];
    const key = hotKey(req);
    if (inm === undefined && key === undefined) {
      // Neither a conditional nor a hot request: no round trip. The tag is the last version this process read, which
      // was committed before this request's data is read, so it is never newer than the data (at worst older: the
      // client then gets a 200 instead of a 304 once, and a fresh tag with it).
      const known = this.lastKnown;
      if (known) req.locals[LOCALS_KEY] = { etag: etagOf(known), version: known, epoch } satisfies CacheLocals;
      return;
    }
    const version = await this.version();
    const etag = etagOf(version);
    const locals: CacheLocals = { etag, version, epoch };
    req.locals[LOCALS_KEY] = locals;
    if (inm !== undefined && etagMatches(inm, etag)) {
      this.counters.notModified++;
      return { status: 304, headers: { etag, 'cache-control': CACHE_CONTROL } };
    }
    if (key === undefined) return;
    const hit = this.entries.get(key);
    if (hit && hit.version === version.version && hit.token === version.token) {
      this.counters.hits++;
      return hit.response;
    }
    if (hit) this.drop(key, hit);
    this.counters.misses++;
    locals.key = key;
  }

  private drop(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  /** Response hook: tags 200 answers; stores hot ones computed within one invalidation epoch. */
  onResponse(req: HttpRequest, res: HttpResponse): HttpResponse | void {
    const locals = req.locals[LOCALS_KEY] as CacheLocals | undefined;
    if (!locals || res.status !== 200) return;
    if (res.headers?.etag !== undefined) return; // a hot hit: already tagged
    const tagged: HttpResponse = { ...res, headers: { ...res.headers, etag: locals.etag, 'cache-control': CACHE_CONTROL } };
    if (locals.key !== undefined && locals.epoch === this.epoch && typeof tagged.body === 'string' && tagged.headers?.['content-type']) {
      // Store only what was computed entirely within one invalidation epoch: an in-process commit during the handler
      // may have let it read newer data than `version` (harmless) or older data than the next version (not stored).
      // kept as UTF-8 bytes: a hit is written without re-encoding (its content-type header stays)
      const body = Buffer.from(tagged.body as string, 'utf8');
      const stored: HttpResponse = { ...tagged, body };
      const size = body.length + locals.key.length + 256;
      if (size > this.maxBytes / 16) return stored; // one answer never takes more than a sixteenth of the budget
      const old = this.entries.get(locals.key);
      if (old) this.drop(locals.key, old);
      while (this.entries.size > 0 && (this.entries.size >= this.maxEntries || this.bytes + size > this.maxBytes)) {
        const [oldestKey, oldest] = this.entries.entries().next().value as [string, Entry];
        this.drop(oldestKey, oldest);
      }
      this.entries.set(locals.key, { version: locals.version.version, token: locals.version.token, response: stored, bytes: size });
      this.bytes += size;
      return stored;
    }
    return tagged;
  }
}

function etagOf(v: ChainVersion): string {
  return `"${v.token}-${v.version}"`;
}

/** The answer-cache key of a request (its URL), or undefined when its answer is not kept in memory. */
function hotKey(req: HttpRequest): string | undefined {
  const route = req.route;
  if (route === undefined || !STORED_ROUTES.has(route)) return undefined;
  return req.rawQuery === '' ? req.path : `${req.path}?${req.rawQuery}`;
}

/** If-None-Match: `*` or a comma-separated list of (possibly weak) entity tags, compared weakly (RFC 9110 13.1.2). */
export function etagMatches(header: string, etag: string): boolean {
  const bare = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const part of header.split(',')) {
    let t = part.trim();
    if (t === '*') return true;
    if (t.startsWith('W/')) t = t.slice(2);
    if (t === bare) return true;
  }
  return false;
}
