/**
 * Prometheus metrics (prom-client): the registry and every metric of the service, in one place. The other modules
 * report through the small functions below; until `enableMetrics()` runs (METRICS_PORT set) each of them returns at
 * the first line, so a service without metrics pays one boolean test per event. Values that already exist elsewhere
 * (connections, rooms, pools, the replica's lag, Redis) are read when Prometheus scrapes, not maintained.
 *
 * The list, with what each metric means and example queries: docs/operations.md, "Metrics".
 */
import client from 'prom-client';
import type { Sql } from './store/sql.js';
import { countPoolUsage, poolUsage } from './store/renewable-pool.js';
import { driverFaultRenewals } from './store/faults.js';
import { replicationLag } from './store/replication-lag.js';

export const registry = new client.Registry();
let enabled = false;

/** Sources read at scrape time; set by the service once its parts exist. */
export interface MetricSources {
  /** the projector of this process (ingest modes): messages logged and applied */
  projector?: () => { appliedId: number; newestId: number } | undefined;
  /** the push server of this process (api modes) */
  push?: () =>
    | { socket_connections: number; rpc_connections: number; rooms: number; replica_held?: number; replica_dropped?: number }
    | undefined;
  /** the read replica (DATABASE_READ_URL): its replay lag is measured at each scrape */
  replica?: Sql;
}
const sources: MetricSources = {};

/** methods reported as they are; any other is 'OTHER' (a label value a client cannot multiply) */
const HTTP_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const httpRequests = new client.Counter({
  name: 'stacks_pulse_http_requests_total',
  help: 'REST requests answered, by route template (not the raw path), method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});
const httpDuration = new client.Histogram({
  name: 'stacks_pulse_http_request_duration_seconds',
  help: 'Time from a REST request received to its answer written, by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});
const observerAcks = new client.Counter({
  name: 'stacks_pulse_observer_acknowledgements_total',
  help: 'Node messages answered by the event observer, by status (200 logged, 400 rejected, 503 not stored: the node re-sends)',
  labelNames: ['status'] as const,
  registers: [registry],
});
const projectorApplied = new client.Counter({
  name: 'stacks_pulse_projector_applied_messages_total',
  help: 'Logged messages the projector applied to the tables',
  registers: [registry],
});
const projectorBatches = new client.Counter({
  name: 'stacks_pulse_projector_batches_total',
  help: 'Projection transactions committed (one per message at the tip, several messages per batch when behind)',
  registers: [registry],
});
const projectionLag = new client.Histogram({
  name: 'stacks_pulse_projection_lag_seconds',
  help: "Time from a message's acknowledgement (logged) to the commit of its projection, messages this process acknowledged",
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});
const projectorFailures = new client.Counter({
  name: 'stacks_pulse_projector_failures_total',
  help: 'Projection attempts that failed (the projector retries: a lost database connection heals by itself)',
  registers: [registry],
});
new client.Gauge({
  name: 'stacks_pulse_projector_backlog_messages',
  help: 'Messages logged and not applied yet (0 when caught up)',
  registers: [registry],
  collect() {
    const p = sources.projector?.();
    if (p) this.set(Math.max(0, p.newestId - p.appliedId));
  },
});
new client.Gauge({
  name: 'stacks_pulse_projector_applied_id',
  help: 'The id of the last message applied (event_log.id)',
  registers: [registry],
  collect() {
    const p = sources.projector?.();
    if (p) this.set(p.appliedId);
  },
});
new client.Gauge({
  name: 'stacks_pulse_push_connections',
  help: 'Push clients connected to this process, by protocol',
  labelNames: ['protocol'] as const,
  registers: [registry],
  collect() {
    const p = sources.push?.();
    if (!p) return;
    this.set({ protocol: 'socket.io' }, p.socket_connections);
    this.set({ protocol: 'json-rpc' }, p.rpc_connections);
  },
});
new client.Gauge({
  name: 'stacks_pulse_push_rooms',
  help: 'Rooms followed by at least one client of this process',
  registers: [registry],
  collect() {
    const p = sources.push?.();
    if (p) this.set(p.rooms);
  },
});
new client.Gauge({
  name: 'stacks_pulse_push_replica_held_messages',
  help: 'Push messages waiting until the read replica has replayed them (DATABASE_READ_URL; at most REPLICA_MAX_HELD_MESSAGES)',
  registers: [registry],
  collect() {
    const p = sources.push?.();
    if (p?.replica_held !== undefined) this.set(p.replica_held);
  },
});
new client.Gauge({
  name: 'stacks_pulse_push_replica_dropped_messages',
  help: 'Push messages dropped because more than REPLICA_MAX_HELD_MESSAGES waited for the replica (their clients resumed by cursor), since start',
  registers: [registry],
  collect() {
    const p = sources.push?.();
    if (p?.replica_dropped !== undefined) this.set(p.replica_dropped);
  },
});
const pushMessages = new client.Counter({
  name: 'stacks_pulse_push_messages_total',
  help: 'Push messages this process delivered to its rooms (each reaches every subscriber of its room)',
  registers: [registry],
});
const pushSlow = new client.Counter({
  name: 'stacks_pulse_push_slow_client_disconnects_total',
  help: 'Push clients disconnected because their unsent data passed PUSH_MAX_BUFFER (they resume by cursor)',
  registers: [registry],
});
const rateLimited = new client.Counter({
  name: 'stacks_pulse_rate_limit_rejections_total',
  help: 'REST requests and push connections refused by the rate limits (429)',
  registers: [registry],
});
const redisClients = new Map<string, { status: string }>();
new client.Gauge({
  name: 'stacks_pulse_redis_up',
  help: 'Redis connection state per client of this process (1 ready, 0 connecting or down); absent without REDIS_URL',
  labelNames: ['client'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [name, c] of redisClients) this.set({ client: name }, c.status === 'ready' ? 1 : 0);
  },
});
new client.Gauge({
  name: 'stacks_pulse_db_pool_max_connections',
  help: 'Connections each PostgreSQL pool may open',
  labelNames: ['pool'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const u of poolUsage()) this.set({ pool: u.pool }, u.max);
  },
});
new client.Gauge({
  name: 'stacks_pulse_db_in_flight',
  help: 'Database work in flight per pool: queries sent and not answered plus open transactions (each holds a connection)',
  labelNames: ['pool'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const u of poolUsage()) this.set({ pool: u.pool }, Math.max(0, u.inFlight));
  },
});
new client.Gauge({
  name: 'stacks_pulse_db_pool_renewals',
  help: 'Times the PostgreSQL pools were replaced after the driver left a dead connection unusable',
  registers: [registry],
  collect() {
    this.set(driverFaultRenewals());
  },
});
new client.Gauge({
  name: 'stacks_pulse_replica_replay_lag_seconds',
  help: 'Read replica (DATABASE_READ_URL): now() minus the commit time of the last transaction it replayed (-1: unreachable)',
  registers: [registry],
  async collect() {
    const r = await replicaLag();
    if (r) this.set(r.seconds);
  },
});
new client.Gauge({
  name: 'stacks_pulse_replica_replay_lag_bytes',
  help: 'Read replica (DATABASE_READ_URL): WAL received and not replayed yet, in bytes (-1: unreachable)',
  registers: [registry],
  async collect() {
    const r = await replicaLag();
    if (r) this.set(r.bytes);
  },
});

/** one replica query per scrape, shared by the two gauges */
let lagQuery: { at: number; result: Promise<{ seconds: number; bytes: number } | undefined> } | undefined;
function replicaLag(): Promise<{ seconds: number; bytes: number } | undefined> {
  const sql = sources.replica;
  if (!sql) return Promise.resolve(undefined);
  const now = Date.now();
  if (lagQuery && now - lagQuery.at < 1000) return lagQuery.result;
  const result = (async () => {
    try {
      const r = await replicationLag(sql);
      return { seconds: Math.max(0, r.seconds ?? 0), bytes: Math.max(0, r.bytes ?? 0) };
    } catch {
      return { seconds: -1, bytes: -1 };
    }
  })();
  lagQuery = { at: now, result };
  return result;
}

/** Turns metrics on (METRICS_PORT set): from now on the reporting functions count. */
export function enableMetrics(from: MetricSources = {}): void {
  Object.assign(sources, from);
  if (enabled) return;
  enabled = true;
  countPoolUsage();
  client.collectDefaultMetrics({ register: registry, prefix: 'stacks_pulse_' });
}

/** Adds or replaces scrape-time sources (the service sets them as its parts start). */
export function setMetricSources(from: MetricSources): void {
  Object.assign(sources, from);
}

export function metricsEnabled(): boolean {
  return enabled;
}

/** A REST request answered: `route` is the matched template ('unmatched' when none), `seconds` from receipt. */
export function countHttpRequest(route: string, method: string, status: number, seconds: number): void {
  if (!enabled) return;
  const labels = { route, method: HTTP_METHODS.has(method) ? method : 'OTHER', status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
}

export function countObserverAck(status: number): void {
  if (!enabled) return;
  observerAcks.inc({ status: String(status) });
}

/** A projection transaction committed `messages` messages; `lagsMs`: acknowledgement-to-commit of those this process logged. */
export function countProjection(messages: number, lagsMs: readonly number[]): void {
  if (!enabled) return;
  projectorApplied.inc(messages);
  projectorBatches.inc();
  for (const ms of lagsMs) projectionLag.observe(ms / 1000);
}

export function countProjectorFailure(): void {
  if (!enabled) return;
  projectorFailures.inc();
}

export function countPushMessages(n: number): void {
  if (!enabled || n === 0) return;
  pushMessages.inc(n);
}

export function countSlowClientDisconnect(): void {
  if (!enabled) return;
  pushSlow.inc();
}

/** A REST request or a push connection refused by the rate limits. */
export function countRateLimitRejection(): void {
  if (!enabled) return;
  rateLimited.inc();
}

/** A Redis client whose state is reported (ioredis exposes `status`: 'ready' when usable). */
export function watchRedisClient(name: string, redis: { status: string }): void {
  let n = name;
  for (let i = 2; redisClients.has(n) && redisClients.get(n) !== redis; i++) n = `${name}-${i}`;
  redisClients.set(n, redis);
}

/** Stops reporting a Redis client (closed). */
export function forgetRedisClient(redis: { status: string }): void {
  for (const [k, v] of redisClients) if (v === redis) redisClients.delete(k);
}
