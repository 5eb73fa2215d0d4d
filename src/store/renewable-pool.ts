/**
 * A postgres.js pool behind a stable handle: every module keeps the `Sql` it was given, and the pool behind it can be
 * replaced by a fresh one when the driver leaves a dead connection unusable (src/store/faults.ts). The old pool is
 * ended in the background (its queries in flight finish or fail as they would have), LISTEN subscriptions are made
 * again on the new pool (their `onlisten` callback runs, as after any reconnect).
 *
 * It also counts this process's database work in flight per pool (queries sent and not answered, plus open
 * transactions, each holding a connection), for the metrics; the counting is off unless metrics are served.
 */
import type { Sql } from './sql.js';
import { onDriverFault } from './faults.js';

export interface PoolUsage {
  /** 'primary' or 'replica' */
  pool: string;
  /** connections the pool may open */
  max: number;
  /** queries sent and not answered yet, plus transactions open (each holds a connection) */
  inFlight: number;
  /** times the pool was replaced after a driver fault */
  renewals: number;
}

const usages = new Set<PoolUsage>();
let counting = false;

/** Starts counting queries in flight (metrics on); costs nothing while off. */
export function countPoolUsage(): void {
  counting = true;
}

/** The pools of this process and their work in flight. */
export function poolUsage(): PoolUsage[] {
  return [...usages].map((u) => ({ ...u }));
}

type AnySql = Sql & ((...args: unknown[]) => unknown);
interface Listening {
  channel: string;
  fn: (payload: string) => void;
  onlisten?: () => void;
  unlisten?: () => Promise<void>;
}
interface QueryInternals {
  handler: (q: unknown) => unknown;
  resolve: (x: unknown) => unknown;
  reject: (x: unknown) => unknown;
}

/** A pool made by `make`, replaced by `make()` again after a driver fault; `name` labels its metrics. */
export function renewablePool(name: string, max: number, make: () => Sql): Sql {
  let current = make() as AnySql;
  let ended = false;
  const usage: PoolUsage = { pool: name, max, inFlight: 0, renewals: 0 };
  usages.add(usage);
  const listening = new Set<Listening>();

  const relisten = async (l: Listening) => {
    for (let pause = 250; !ended && listening.has(l); pause = Math.min(pause * 2, 5000)) {
      try {
        l.unlisten = (await current.listen(l.channel, l.fn, l.onlisten)).unlisten;
        return;
      } catch {
        await new Promise((r) => setTimeout(r, pause).unref());
      }
    }
  };
  const unregister = onDriverFault(() => {
    if (ended) return;
    const old = current;
    current = make() as AnySql;
    usage.renewals++;
    usage.inFlight = 0; // the old pool's work ends with it; counting it would leave the gauge high forever
    old.end({ timeout: 5 }).catch(() => undefined);
    for (const l of listening) void relisten(l);
  });

  /** counts a query from when the pool runs it until it is answered */
  const track = (q: unknown) => {
    const p = q as Partial<QueryInternals> | null;
    if (!(p instanceof Promise) || typeof p.handler !== 'function' || typeof p.resolve !== 'function' || typeof p.reject !== 'function') return;
    const { handler, resolve, reject } = p as QueryInternals;
    let running = false;
    let generation = 0;
    const done = () => {
      if (running && generation === usage.renewals) usage.inFlight--;
      running = false;
    };
    p.handler = (x) => {
      running = true;
      generation = usage.renewals;
      usage.inFlight++;
      return handler(x);
    };
    p.resolve = (x) => (done(), resolve(x));
    p.reject = (x) => (done(), reject(x));
  };

  const listen = async (channel: string, fn: (payload: string) => void, onlisten?: () => void) => {
    const l: Listening = { channel, fn, onlisten };
    const r = await current.listen(channel, fn, onlisten);
    l.unlisten = r.unlisten;
    listening.add(l);
    return {
      state: r.state,
      unlisten: async () => {
        listening.delete(l);
        await l.unlisten?.();
      },
    };
  };
  const begin = (...args: unknown[]) => {
    if (!counting) return (current.begin as (...a: unknown[]) => Promise<unknown>)(...args);
    usage.inFlight++;
    const renewalsAtStart = usage.renewals;
    return (current.begin as (...a: unknown[]) => Promise<unknown>)(...args).finally(() => {
      if (usage.renewals === renewalsAtStart) usage.inFlight--;
    });
  };
  const end = async (opts?: { timeout?: number }) => {
    ended = true;
    unregister();
    usages.delete(usage);
    listening.clear();
    await current.end(opts);
  };

  return new Proxy((() => undefined) as unknown as Sql, {
    apply(_target, _this, args: unknown[]) {
      const q = current(...args);
      if (counting) track(q);
      return q;
    },
    get(_target, prop) {
      if (prop === 'end') return end;
      if (prop === 'listen') return listen;
      if (prop === 'begin') return begin;
      return Reflect.get(current, prop);
    },
  });
}
