/**
 * `stacks-pulse demo`: feeds a running service a generated testnet chain at a watchable pace, as a Stacks node would
 * (one message at a time, in order, each POSTed to the observer until answered 200). The chain comes from the
 * project's synthetic chain generator (load/generator/, compiled to dist/load/ beside dist/src/): valid signed token
 * transfers with memos, contract deploys and calls, FT/NFT events, BNS names, microblocks, a fork and a mempool. It
 * stops with transactions still pending in the mempool, so every part of the dashboard has something to show.
 */
import { Cl, type BufferCV, type TupleCV } from '@stacks/transactions';
import { ChainGenerator } from '../load/generator/index.js';
import type { GeneratedMessage, GeneratedTx } from '../load/generator/types.js';
import {
  ObserverRejected,
  bodyDetail,
  explainRejection,
  fetchFailureCode,
  notListening,
  probeObserver,
  retryableStatus,
  sleep,
} from './observer-client.js';

export interface DemoOptions {
  /** observer base URL */
  url: string;
  /** canonical height to reach (at least 1) */
  blocks: number;
  /** pause before each block, in ms (the mempool of the next block is visible meanwhile) */
  paceMs: number;
  /** one progress line at a time (without the newline) */
  write: (line: string) => void;
  /** stops after the message in flight */
  signal?: AbortSignal;
  /** how long a message may go unaccepted (refused connection, 5xx) before the demo stops (default 60 s) */
  giveUpAfterMs?: number;
}

export interface DemoStats {
  /** messages POSTed and answered 200 */
  messages: number;
  /** the canonical tip height reached */
  height: number;
  /** transactions mined in canonical blocks, coinbases included */
  txs: number;
  /** transactions left pending in the mempool */
  pending: number;
  /** BNS names registered (fully qualified) */
  names: string[];
  /** an account that received STX, to look up */
  account?: string;
  complete: boolean;
}

const DEMO_SEED = 'stacks-pulse-demo';
const FORK_DEPTH = 1;

/**
 * The demo chain's messages, in the order a node sends them, cut where the canonical tip is at least `blocks` high,
 * longer than any competing branch, and the next block's transactions are announced to the mempool but not mined.
 */
export async function demoMessages(blocks: number): Promise<GeneratedMessage[]> {
  const gen = new ChainGenerator({
    blocks: blocks + FORK_DEPTH + 3,
    txsPerBlock: 4,
    seed: DEMO_SEED,
    accounts: 8,
    forks: true,
    forkEvery: 12,
    forkDepth: FORK_DEPTH,
    microblockEvery: 5,
    maturity: 3,
    bns: true,
    // burn times close to now, so the dashboard's "ago" columns read naturally
    startTime: Math.floor(Date.now() / 1000) - 600 * (blocks + 8),
  });
  const all: GeneratedMessage[] = [];
  for await (const m of gen.messages()) all.push(m);
  fundAccounts(all.find((m) => m.path === '/new_block')!, gen.accountAddresses);
  let canonical = 0;
  let highest = 0;
  for (let i = 0; i < all.length; i++) {
    const m = all[i];
    if (m.block) {
      highest = Math.max(highest, m.block.height);
      if (m.block.finallyCanonical) canonical = Math.max(canonical, m.block.height);
    }
    if (m.path === '/new_mempool_tx' && canonical >= blocks && canonical === highest) return all.slice(0, i + 1);
  }
  return all;
}

/** STX each demo account starts with (in µSTX): far more than the transfers of a demo spend. */
const GENESIS_STX = 100_000n * 1_000_000n;

/**
 * Genesis allocations, as a node reports them in block 1: an stx_mint_event per account (the generator's accounts start
 * at zero, so their balances would go negative as they send).
 */
function fundAccounts(first: GeneratedMessage, accounts: string[]): void {
  const body = JSON.parse(first.body) as { transactions: { txid: string }[]; events: Record<string, unknown>[] };
  const txid = body.transactions[0].txid;
  const mints = accounts.map((recipient) => ({
    txid,
    type: 'stx_mint_event',
    committed: true,
    stx_mint_event: { recipient, amount: GENESIS_STX.toString() },
  }));
  body.events = [...mints, ...body.events].map((e, i) => ({ ...e, event_index: i }));
  first.body = JSON.stringify(body);
}

/** POSTs one message until it is answered 200; a 4xx stops at once (ObserverRejected), refusals and 5xx are retried. */
async function post(base: string, m: GeneratedMessage, opts: DemoOptions): Promise<boolean> {
  const since = Date.now();
  for (let delay = 250; ; delay = Math.min(delay * 2, 5000)) {
    let outcome: string;
    try {
      const res = await fetch(base + m.path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: m.body,
        signal: AbortSignal.timeout(60_000),
      });
      const text = await res.text();
      if (res.status === 200) return true;
      const detail = bodyDetail(text);
      if (!retryableStatus(res.status)) throw new ObserverRejected(await explainRejection(base, m.path, res.status, detail));
      outcome = `${res.status}${detail ? `: ${detail}` : ''}`;
    } catch (err) {
      if (err instanceof ObserverRejected) throw err;
      outcome = fetchFailureCode(err);
    }
    if (Date.now() - since >= (opts.giveUpAfterMs ?? 60_000)) {
      throw new ObserverRejected(/^E[A-Z]+$/.test(outcome) ? notListening(base, outcome) : `${base} did not accept ${m.path} (last answer ${outcome})`);
    }
    opts.write(`  ${m.path} not accepted (${outcome}); retrying in ${(delay / 1000).toFixed(1)} s`);
    await sleep(delay, opts.signal);
    if (opts.signal?.aborted) return false;
  }
}

const KIND: Record<string, string> = { token_transfer: 'transfer', smart_contract: 'deploy', contract_call: 'call' };

/** "2 transfers, 1 deploy, 1 BNS name-register" */
function describeTxs(txs: GeneratedTx[]): string {
  const counts = new Map<string, number>();
  for (const t of txs) {
    if (t.type === 'coinbase') continue;
    const bns = t.call?.includes('.bns::') ? `BNS ${t.call.split('::')[1]}` : undefined;
    const fn = t.call?.split('::')[1];
    const kind = bns ?? (fn && fn !== 'ping' ? fn : KIND[t.type] ?? t.type);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n} ${k}${n > 1 && !k.startsWith('BNS') && !k.includes('-') ? 's' : ''}`).join(', ');
}

export async function runDemo(opts: DemoOptions): Promise<DemoStats> {
  const base = opts.url.replace(/\/+$/, '');
  await probeObserver(base);
  const messages = await demoMessages(opts.blocks);
  const stats: DemoStats = { messages: 0, height: 0, txs: 0, pending: 0, names: [], complete: false };
  const pending = new Set<string>();
  const received = new Map<string, number>();
  let blocksSeen = 0;
  for (const m of messages) {
    if (opts.signal?.aborted) return stats;
    if (m.path === '/new_burn_block' && blocksSeen > 0) {
      await sleep(opts.paceMs, opts.signal);
      if (opts.signal?.aborted) return stats;
    }
    if (!(await post(base, m, opts))) return stats;
    stats.messages++;
    switch (m.path) {
      case '/new_mempool_tx':
        for (const t of m.txs) pending.add(t.txId);
        opts.write(`mempool   +${m.txs.length} txs (${describeTxs(m.txs)}), ${pending.size} pending`);
        break;
      case '/drop_mempool_tx':
        for (const t of m.txs) pending.delete(t.txId);
        opts.write(`mempool   -${m.txs.length} txs dropped (${(JSON.parse(m.body) as { reason: string }).reason}), ${pending.size} pending`);
        break;
      case '/new_microblocks':
        for (const t of m.txs) pending.delete(t.txId);
        opts.write(`microblocks: ${m.txs.length} txs streamed (${describeTxs(m.txs)})`);
        break;
      case '/new_block': {
        blocksSeen++;
        const b = m.block!;
        for (const t of m.txs) pending.delete(t.txId);
        const body = JSON.parse(m.body) as { index_block_hash: string; transactions: { raw_tx: string }[] };
        if (b.finallyCanonical) {
          stats.height = Math.max(stats.height, b.height);
          stats.txs += m.txs.length;
          for (const t of m.txs) {
            if (t.call?.endsWith('::name-register')) {
              const name = nameOf(m, t);
              if (name) stats.names.push(name);
            }
          }
        }
        for (const e of (JSON.parse(m.body) as { events: { stx_transfer_event?: { recipient: string; amount: string } }[] }).events) {
          const r = e.stx_transfer_event?.recipient;
          if (r && b.finallyCanonical) received.set(r, (received.get(r) ?? 0) + 1);
        }
        const what = describeTxs(m.txs);
        opts.write(
          `block ${String(b.height).padStart(3)}  ${body.index_block_hash.slice(0, 12)}…  ${m.txs.length} txs${what ? ` (${what})` : ''}` +
            (b.finallyCanonical ? '' : '  [competing branch: a longer one replaces it soon]'),
        );
        break;
      }
      default:
        break;
    }
  }
  stats.pending = pending.size;
  stats.account = [...received].sort((a, b) => b[1] - a[1])[0]?.[0];
  stats.complete = true;
  return stats;
}

/** The fully qualified name a name-register transaction of block message `m` registers (its bns::names NFT mint). */
function nameOf(m: GeneratedMessage, t: GeneratedTx): string | undefined {
  const body = JSON.parse(m.body) as { events: { txid: string; nft_mint_event?: { raw_value: string } }[] };
  const mint = body.events.find((e) => e.txid === t.txId && e.nft_mint_event)?.nft_mint_event;
  if (!mint) return undefined;
  // the NFT's value is the tuple {name: (buff), namespace: (buff)}
  const v = Cl.deserialize(mint.raw_value) as TupleCV<{ name: BufferCV; namespace: BufferCV }>;
  const ascii = (b: BufferCV) => Buffer.from(b.value, 'hex').toString('ascii');
  return `${ascii(v.value.name)}.${ascii(v.value.namespace)}`;
}
