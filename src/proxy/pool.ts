// The pool of Stacks nodes behind /v2: round robin over the nodes that are up. A node that refuses connections,
// times out or answers 5xx is marked down; it is probed with GET /v2/info after an exponentially growing pause
// (base, 2×base, 4×base ... up to max) and comes back only when a probe answers 2xx.
import http from 'node:http';
import https from 'node:https';

export interface PoolOptions {
  /** First back-off after a failure (default 1 s). */
  backoffBaseMs?: number;
  /** Longest back-off (default 60 s). */
  backoffMaxMs?: number;
  /** Time a probe may take (default 5 s). */
  probeTimeoutMs?: number;
}

export interface NodeState {
  url: string;
  up: boolean;
  lastError: string | null;
  lastErrorAt: number | null;
  /** Smoothed time to response headers (requests and probes), ms. */
  latencyMs: number | null;
  consecutiveFailures: number;
  nextProbeAt: number | null;
  requests: number;
}

export class PoolNode implements NodeState {
  readonly url: string;
  /** Parsed base URL (a path prefix such as http://host/node is kept). */
  readonly base: URL;
  readonly agent: http.Agent;
  up = true;
  lastError: string | null = null;
  lastErrorAt: number | null = null;
  latencyMs: number | null = null;
  consecutiveFailures = 0;
  nextProbeAt: number | null = null;
  requests = 0;
  timer: NodeJS.Timeout | undefined;

  constructor(url: string) {
    this.url = url;
    this.base = new URL(url);
    const Agent = this.base.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 32, timeout: 60_000 });
  }

  get module(): typeof http | typeof https {
    return this.base.protocol === 'https:' ? https : http;
  }

  /** The URL without credentials, for the status endpoint and logs. */
  get publicUrl(): string {
    const u = new URL(this.url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  }

  recordLatency(ms: number): void {
    this.latencyMs = this.latencyMs === null ? ms : Math.round((this.latencyMs * 0.8 + ms * 0.2) * 100) / 100;
  }
}

export class NodePool {
  readonly nodes: PoolNode[];
  private next = 0;
  private closed = false;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly probeTimeoutMs: number;
  /** Called when a node changes state (for logging). */
  onChange: ((node: PoolNode, up: boolean, reason: string) => void) | undefined;

  constructor(urls: string[], opts: PoolOptions = {}) {
    this.nodes = urls.map((u) => new PoolNode(u));
    this.backoffBaseMs = opts.backoffBaseMs ?? 1000;
    this.backoffMaxMs = opts.backoffMaxMs ?? 60_000;
    this.probeTimeoutMs = opts.probeTimeoutMs ?? 5000;
  }

  /** The next node that is up in round-robin order, skipping `exclude`; undefined when none. */
  pick(exclude?: Set<PoolNode>): PoolNode | undefined {
    const n = this.nodes.length;
    for (let i = 0; i < n; i++) {
      const node = this.nodes[(this.next + i) % n];
      if (node.up && !exclude?.has(node)) {
        this.next = (this.next + i + 1) % n;
        return node;
      }
    }
    return undefined;
  }

  /** A request got a response from `node` (status < 500). */
  succeeded(node: PoolNode, latencyMs: number): void {
    node.recordLatency(latencyMs);
    node.consecutiveFailures = 0;
  }

  /** A request to `node` failed: marks it down and schedules a probe after the back-off. */
  failed(node: PoolNode, reason: string): void {
    node.lastError = reason;
    node.lastErrorAt = Date.now();
    node.consecutiveFailures++;
    this.scheduleProbe(node);
    if (node.up) {
      node.up = false;
      this.onChange?.(node, false, reason);
    }
  }

  private scheduleProbe(node: PoolNode): void {
    if (this.closed) return;
    const delay = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.min(30, Math.max(0, node.consecutiveFailures - 1)));
    node.nextProbeAt = Date.now() + delay;
    if (node.timer) clearTimeout(node.timer);
    node.timer = setTimeout(() => {
      node.timer = undefined;
      void this.probe(node);
    }, delay);
    node.timer.unref();
  }

  /** GET /v2/info on a down node: 2xx brings it back, anything else doubles its back-off. */
  async probe(node: PoolNode): Promise<boolean> {
    const started = performance.now();
    const result = await probeInfo(node, this.probeTimeoutMs);
    if (this.closed) return false;
    if (result === true) {
      node.recordLatency(performance.now() - started);
      node.consecutiveFailures = 0;
      node.nextProbeAt = null;
      if (!node.up) {
        node.up = true;
        this.onChange?.(node, true, 'probe GET /v2/info succeeded');
      }
      return true;
    }
    node.lastError = `probe GET /v2/info: ${result}`;
    node.lastErrorAt = Date.now();
    node.consecutiveFailures++;
    this.scheduleProbe(node);
    return false;
  }

  status(): { total: number; up: number; nodes: Record<string, unknown>[] } {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      total: this.nodes.length,
      up: this.nodes.filter((n) => n.up).length,
      nodes: this.nodes.map((n) => ({
        url: n.publicUrl,
        status: n.up ? 'up' : 'down',
        latency_ms: n.latencyMs === null ? null : Math.round(n.latencyMs * 100) / 100,
        last_error: n.lastError,
        last_error_at: iso(n.lastErrorAt),
        consecutive_failures: n.consecutiveFailures,
        next_probe_at: n.up ? null : iso(n.nextProbeAt),
        requests: n.requests,
      })),
    };
  }

  close(): void {
    this.closed = true;
    for (const n of this.nodes) {
      if (n.timer) clearTimeout(n.timer);
      n.timer = undefined;
      n.agent.destroy();
    }
  }
}

/** Joins the node's base path and a request path (`/v2/...`). */
export function nodePath(node: PoolNode, pathAndQuery: string): string {
  const prefix = node.base.pathname.replace(/\/+$/, '');
  return prefix + pathAndQuery;
}

/** true, or why the probe failed. */
function probeInfo(node: PoolNode, timeoutMs: number): Promise<true | string> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (r: true | string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = node.module.request(
      {
        protocol: node.base.protocol,
        hostname: node.base.hostname,
        port: node.base.port || undefined,
        path: nodePath(node, '/v2/info'),
        method: 'GET',
        agent: node.agent,
        headers: { accept: 'application/json' },
        auth: node.base.username ? `${decodeURIComponent(node.base.username)}:${decodeURIComponent(node.base.password)}` : undefined,
      },
      (res) => {
        res.resume();
        const status = res.statusCode ?? 0;
        res.on('end', () => done(status >= 200 && status < 300 ? true : `status ${status}`));
        res.on('error', (e) => done(e.message));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done(`timed out after ${timeoutMs} ms`);
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
    req.end();
  });
}
