/**
 * The hooks' machinery in the ingest process:
 *   journal   — inside each projection transaction, the blocks it made canonical (apply) or orphaned (rollback) go to
 *               hook_chain (the durable outbox: committed with the tables, or not at all);
 *   evaluator — reads hook_chain in order, matches the blocks against the indexed predicates and writes each hook's
 *               deliveries (a rollback carries what the hook had been sent for that block), then moves its cursor, in
 *               one transaction; a new hook's history is evaluated from the stored tables first (backfill);
 *   delivery  — per hook, the oldest pending delivery is POSTed (signed, with a timeout); a failure is retried with
 *               exponential back-off and holds back only that hook's later deliveries (chain order per hook). Hooks
 *               whose receiver fails or is slow are delivered in a lane of their own; the answers are recorded in
 *               batches (one statement for the attempts answered together).
 * Ingestion never waits for the evaluator or for a receiver: the projector only inserts the journal rows.
 */
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Sql } from '../store/sql.js';
import type { AppliedMessage, Projector } from '../projector/projector.js';
import {
  advanceHookCursor,
  appliedDeliveriesOf,
  canonicalBlockHashes,
  canonicalTipHeight,
  dueDeliveries,
  hookCursor,
  hooksVersion,
  insertDeliveries,
  insertHistoryDeliveries,
  journalAfter,
  journalChainChanges,
  journalHead,
  liveHooks,
  loadHookBlocks,
  loadHookCandidates,
  nextDueAt,
  recordAttempts,
  settleHook,
  unsettledHooks,
  type AttemptRecord,
  type ChainChange,
  type DueDelivery,
  type HookRow,
  type HookSqlMatch,
  type HookTxFilter,
  type NewDelivery,
} from '../store/hooks.js';
import { HookIndex, SIP09, SIP10, type HookBlock } from './evaluate.js';
import { chainhookBlock, hookPayload, type ChainhookBlock, type HookPayload } from './payload.js';
import type { HookPredicate } from './predicate.js';
import { hostAllowed } from './urls.js';

export interface HooksOptions {
  /** bytes of one payload at most: a block whose matches exceed it is sent in several payloads */
  maxPayloadBytes: number;
  timeoutMs: number;
  /** undefined or empty: any host */
  allowedHosts: string[];
  retryMinMs: number;
  retryMaxMs: number;
  /** deliveries at the same time in each lane (quick receivers; failed or slow ones) */
  concurrency: number;
}

export const SIGNATURE_HEADER = 'x-stacks-pulse-signature';
export const DELIVERY_HEADER = 'x-stacks-pulse-delivery';
export const HOOK_HEADER = 'x-stacks-pulse-hook';

/** `sha256=<hex HMAC-SHA256 of the body with the hook's secret>` */
export function signBody(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** The journal rows for the messages of a projection transaction, in log order. */
export function chainChanges(applied: AppliedMessage[]): (ChainChange & { group: number })[] {
  const out: (ChainChange & { group: number })[] = [];
  applied.forEach(({ result }, i) => {
    if (!result?.applied || result.kind !== 'block') return;
    for (const h of result.orphanedBlocks) out.push({ action: 'rollback', index_block_hash: h, group: 2 * i });
    const applies = new Set(result.restoredBlocks);
    if (result.canonicalBlock) applies.add(result.canonicalBlock);
    for (const h of applies) out.push({ action: 'apply', index_block_hash: h, group: 2 * i + 1 });
  });
  return out;
}

/** What SQL can narrow a predicate to (the evaluator decides on what is left): see loadHookCandidates. */
export function txFilterOf(p: HookPredicate): HookTxFilter {
  const q = p.if_this;
  switch (q.scope) {
    case 'txid':
      return { txId: q.equals.toLowerCase() };
    case 'contract_call':
      return { calledContract: q.contract_identifier };
    case 'contract_deployment':
      return { deployments: true };
    case 'print_event':
      return { eventTypes: ['smart_contract_log'], contractId: q.contract_identifier === '*' ? undefined : q.contract_identifier };
    case 'ft_event':
      return { eventTypes: ['fungible_token_asset'], assetIdentifier: q.asset_identifier };
    case 'nft_event':
      return { eventTypes: ['non_fungible_token_asset'], assetIdentifier: q.asset_identifier };
    case 'stx_event':
      return { eventTypes: q.actions.includes('lock') ? ['stx_asset', 'stx_lock'] : ['stx_asset'] };
    default:
      return { every: true };
  }
}

/**
 * The predicate as the database can decide it exactly (history built there: insertHistoryDeliveries), or undefined
 * when only the evaluator can: print `matches_regex` beyond a literal with optional ^ / $ anchors (RE2 semantics,
 * which PostgreSQL's regular expressions do not share). `expire_after_occurrence` is counted per chunk
 * (insertHistoryDeliveries writes at most the blocks left).
 */
export function sqlMatchOf(p: HookPredicate): HookSqlMatch | undefined {
  const q = p.if_this;
  switch (q.scope) {
    case 'txid':
      return { txId: q.equals.toLowerCase() };
    case 'contract_call':
      return { calledContract: q.contract_identifier, method: q.method };
    case 'contract_deployment':
      if (q.deployer !== undefined) return { deployer: q.deployer };
      return { traitFunctions: q.implement_trait === 'sip09' ? [SIP09] : q.implement_trait === 'sip10' ? [SIP10] : [SIP09, SIP10] };
    case 'print_event': {
      if (q.contains !== undefined) return { printContract: q.contract_identifier, text: { value: q.contains, start: false, end: false } };
      if (q.matches_regex === undefined) return { printContract: q.contract_identifier };
      // a literal, optionally anchored at the start (^) and/or the end ($), means the same in RE2 and as a text test
      const lit = /^(\^?)([^\\.+*?()|[\]{}^$]*)(\$?)$/.exec(q.matches_regex);
      return lit ? { printContract: q.contract_identifier, text: { value: lit[2], start: lit[1] === '^', end: lit[3] === '$' } } : undefined;
    }
    case 'ft_event':
      return { tokenEvent: 'fungible_token_asset', assetIdentifier: q.asset_identifier, actions: q.actions };
    case 'nft_event':
      return { tokenEvent: 'non_fungible_token_asset', assetIdentifier: q.asset_identifier, actions: q.actions };
    case 'stx_event':
      return { stxActions: q.actions, lock: q.actions.includes('lock') };
    case 'block_height':
      return { heights: { equals: q.equals, higher_than: q.higher_than, lower_than: q.lower_than, between: q.between } };
  }
}

const BATCH = 200;
/** an answer slower than this (or than half the timeout) puts a hook in the slow lane */
const SLOW_MS = 1000;
const BACKFILL_CHUNK = 500;

export class HookRunner {
  /** called with each payload when it is first attempted (the push room hook:<uuid>) */
  onPayload: ((uuid: string, deliveryId: number, payload: HookPayload) => void) | undefined;
  private running = false;
  private evaluatorLoop: Promise<void> | undefined;
  private deliveryLoop: Promise<void> | undefined;
  private wakeEvaluator: (() => void) | undefined;
  private wakeDelivery: (() => void) | undefined;
  private evaluatorKicked = false;
  private deliveryKicked = false;
  private version = '';
  private index = new HookIndex([]);
  private hooks = new Map<number, HookRow>();
  private readonly inflight = new Map<number, Promise<void>>();
  /** hooks whose receiver failed or answered slowly at its last attempt, and those of them being delivered to */
  private readonly slow = new Set<number>();
  private readonly inflightSlow = new Set<number>();
  private toRecord: { a: AttemptRecord; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private recording: Promise<void> | undefined;
  /** ms spent matching blocks (evaluation only), for the benchmark */
  readonly evaluation = { blocks: 0, ms: 0 };
  /**
   * ms spent in each part of history evaluations: in the database (`statement`: matching, building and writing a
   * chunk), or here (reading candidates, matching, building payloads, writing)
   */
  readonly history = { statement: 0, read: 0, match: 0, build: 0, write: 0 };

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    private readonly opts: HooksOptions,
  ) {}

  /** Journals each projection's chain changes in its transaction, and wakes the evaluator after its commit. */
  attach(projector: Projector): void {
    projector.onApplying((tx, applied) => journalChainChanges(tx, chainChanges(applied)));
    projector.onCommitted(() => this.kick());
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.evaluatorLoop = this.runEvaluator();
    this.deliveryLoop = this.runDelivery();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakeEvaluator?.();
    this.wakeDelivery?.();
    await this.evaluatorLoop;
    await this.deliveryLoop;
    await Promise.allSettled([...this.inflight.values()]);
  }

  /** Something changed (a projection committed, a hook was created): look again. */
  kick(): void {
    this.evaluatorKicked = true;
    this.wakeEvaluator?.();
  }

  private kickDelivery(): void {
    this.deliveryKicked = true;
    this.wakeDelivery?.();
  }

  // ---- evaluator ---------------------------------------------------------------------------------------------------

  private async runEvaluator(): Promise<void> {
    let pause = 250;
    while (this.running) {
      try {
        this.evaluatorKicked = false;
        const worked = await this.evaluateOnce();
        pause = 250;
        if (!worked && !this.evaluatorKicked) await this.sleep(1000, 'evaluator');
      } catch (err) {
        this.log.error({ err }, 'hooks: evaluation failed (retrying)');
        await this.sleep(pause, 'evaluator');
        pause = Math.min(pause * 2, 30_000);
      }
    }
  }

  /** One step: new hooks' history, then the next journal rows. True when it did something. */
  async evaluateOnce(): Promise<boolean> {
    const v = await hooksVersion(this.sql);
    if (v !== this.version) {
      for (const h of await unsettledHooks(this.sql)) await this.backfill(h);
      const rows = await liveHooks(this.sql);
      this.hooks = new Map(rows.map((h) => [h.id, h]));
      this.index = new HookIndex(rows.map((h) => ({ id: h.id, predicate: h.predicate as unknown as HookPredicate })));
      // the fingerprint read before: a hook created meanwhile changes it again and is settled on the next step
      this.version = v;
    }
    const cursor = await hookCursor(this.sql);
    const rows = await journalAfter(this.sql, cursor, BATCH);
    if (!rows.length) return false;
    const blocks = this.index.size ? await loadHookBlocks(this.sql, [...new Set(rows.filter((r) => r.action === 'apply').map((r) => r.index_block_hash))]) : new Map<string, HookBlock>();
    const counts = new Map<number, number>();
    let made = 0;
    // one transaction: a rollback reads the applies made earlier in the same batch (a fork inside one batch)
    await this.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      let deliveries: NewDelivery[] = [];
      const flush = async () => {
        made += deliveries.length;
        await insertDeliveries(t, deliveries);
        deliveries = [];
      };
      for (const r of rows) {
        if (r.action === 'apply') {
          const block = blocks.get(r.index_block_hash);
          if (!block) continue;
          const started = performance.now();
          const matches = this.index.match(block);
          this.evaluation.ms += performance.now() - started;
          this.evaluation.blocks++;
          for (const [id, m] of matches) {
            const hook = this.hooks.get(id);
            if (!hook || hook.from_seq === null || r.seq <= hook.from_seq) continue;
            if (!this.countOccurrence(hook, counts)) continue;
            for (const b of this.splitBlock(block, m.txs, hook)) deliveries.push({ hook_id: id, action: 'apply', index_block_hash: block.index_block_hash, block_height: block.block_height, block: b });
          }
        } else {
          await flush();
          for (const d of await appliedDeliveriesOf(t, r.index_block_hash)) {
            const hook = this.hooks.get(d.hook_id);
            if (hook && hook.from_seq !== null && r.seq <= hook.from_seq) continue;
            deliveries.push({ hook_id: d.hook_id, action: 'rollback', index_block_hash: r.index_block_hash, block_height: d.block_height, block: d.block });
          }
        }
      }
      await flush();
      await advanceHookCursor(t, rows[rows.length - 1].seq);
    });
    for (const [id, n] of counts) {
      const h = this.hooks.get(id);
      if (h) h.occurrences += n;
    }
    if (made) this.kickDelivery();
    return true;
  }

  /** Counts an apply for the hook; false once it has reached expire_after_occurrence. */
  private countOccurrence(hook: HookRow, counts: Map<number, number>): boolean {
    const max = (hook.predicate as unknown as HookPredicate).expire_after_occurrence;
    const n = counts.get(hook.id) ?? 0;
    if (max !== undefined && hook.occurrences + n >= max) return false;
    counts.set(hook.id, n + 1);
    return true;
  }

  /** The block's matching txs as one or more payload blocks, each under the payload limit. */
  private splitBlock(block: HookBlock, txs: number[], hook: HookRow): ChainhookBlock[] {
    const p = hook.predicate as unknown as HookPredicate;
    const whole = chainhookBlock(block, txs, p);
    const limit = this.opts.maxPayloadBytes - 1024; // room for the envelope
    if (JSON.stringify(whole).length <= limit || txs.length <= 1) return [whole];
    const out: ChainhookBlock[] = [];
    let part: number[] = [];
    for (const i of txs) {
      const next = [...part, i];
      if (part.length && JSON.stringify(chainhookBlock(block, next, p)).length > limit) {
        out.push(chainhookBlock(block, part, p));
        part = [i];
      } else part = next;
    }
    if (part.length) out.push(chainhookBlock(block, part, p));
    return out;
  }

  /**
   * A new hook: its history (canonical blocks from start_block, as the tables hold them) is evaluated in one
   * REPEATABLE READ snapshot that also fixes where in the journal it starts following (from_seq), so history and
   * the live stream meet with no gap and no duplicate. Without a start_block its history starts at the first block,
   * as Chainhook scans a predicate without one from genesis; a start_block above the tip means the live stream only.
   * A predicate the database decides exactly (sqlMatchOf: all but print matches_regex) is matched, built and written
   * there, one statement per chunk; the others (and `inDatabase: false`, for comparison) are read and matched here,
   * chunk by chunk.
   */
  async backfill(hook: HookRow, opts: { inDatabase?: boolean } = {}): Promise<number> {
    const p = hook.predicate as unknown as HookPredicate;
    const started = performance.now();
    let blocksSeen = 0;
    await this.sql.begin('isolation level repeatable read', async (tx) => {
      const t = tx as unknown as Sql;
      const head = await journalHead(t);
      const tip = await canonicalTipHeight(t);
      const to = Math.min(tip, p.end_block ?? tip);
      const sqlMatch = opts.inDatabase === false ? undefined : sqlMatchOf(p);
      const history = { index: new HookIndex([{ id: hook.id, predicate: p }]), counts: new Map<number, number>(), filter: txFilterOf(p) };
      for (let from = p.start_block ?? 0; from <= to; from += BACKFILL_CHUNK) {
        const last = Math.min(to, from + BACKFILL_CHUNK - 1);
        if (sqlMatch) {
          // matched, built and written in one statement; a chunk with a block too large for one payload is split here
          const at = performance.now();
          const counted = history.counts.get(hook.id) ?? 0;
          const left = p.expire_after_occurrence === undefined ? undefined : p.expire_after_occurrence - hook.occurrences - counted;
          if (left !== undefined && left <= 0) break;
          const r = await insertHistoryDeliveries(t, hook.id, { from, to: last }, sqlMatch, {
            decode: p.decode_clarity_values ?? false,
            contractAbi: p.include_contract_abi ?? false,
            maxBlockChars: this.opts.maxPayloadBytes - 1024,
            maxBlocks: left,
          });
          this.history.statement += performance.now() - at;
          if (!r.oversized) {
            history.counts.set(hook.id, counted + r.inserted);
            blocksSeen += r.blocks;
            if (left !== undefined && r.inserted >= left) break;
            continue;
          }
        }
        const { seen, expired } = await this.backfillChunk(t, hook, from, last, history);
        blocksSeen += seen;
        if (expired) break;
      }
      await settleHook(t, hook.id, head);
    });
    if (blocksSeen) {
      const s = (performance.now() - started) / 1000;
      this.log.info({ hook: hook.uuid, blocks: blocksSeen, seconds: Math.round(s * 10) / 10 }, 'hooks: history evaluated');
    }
    this.kickDelivery();
    return blocksSeen;
  }

  /** One chunk of a history evaluated here: candidate txs read, matched by the evaluator, payloads built and written. */
  private async backfillChunk(
    t: Sql,
    hook: HookRow,
    from: number,
    to: number,
    h: { index: HookIndex; counts: Map<number, number>; filter: HookTxFilter },
  ): Promise<{ seen: number; expired: boolean }> {
    const prof = this.history;
    let at = performance.now();
    const lap = (k: 'read' | 'match' | 'build' | 'write') => {
      const now = performance.now();
      prof[k] += now - at;
      at = now;
    };
    const hashes = await canonicalBlockHashes(t, from, to);
    // only the blocks with a tx the predicate may match, with those txs only
    const blocks = await loadHookCandidates(t, hashes, h.filter);
    lap('read');
    const deliveries: NewDelivery[] = [];
    let seen = 0;
    let expired = false;
    for (const hash of hashes) {
      seen++;
      const block = blocks.get(hash);
      if (!block) continue;
      const m = h.index.match(block).get(hook.id);
      lap('match');
      if (!m) continue;
      if (!this.countOccurrence(hook, h.counts)) {
        expired = true;
        break;
      }
      for (const b of this.splitBlock(block, m.txs, hook)) deliveries.push({ hook_id: hook.id, action: 'apply', index_block_hash: hash, block_height: block.block_height, block: b });
      lap('build');
    }
    await insertDeliveries(t, deliveries);
    lap('write');
    return { seen, expired };
  }

  // ---- delivery ----------------------------------------------------------------------------------------------------

  /**
   * Two lanes of `concurrency` deliveries each: hooks whose receiver failed or answered slowly at its last attempt
   * (this.slow) take their places in the slow lane only, so however many receivers are dead or slow, the others'
   * deliveries never wait for a place.
   */
  private async runDelivery(): Promise<void> {
    let pause = 250;
    while (this.running) {
      try {
        this.deliveryKicked = false;
        const fastFree = this.opts.concurrency - (this.inflight.size - this.inflightSlow.size);
        const slowFree = this.opts.concurrency - this.inflightSlow.size;
        let started = 0;
        if (fastFree > 0 || (slowFree > 0 && this.slow.size > 0)) {
          const busy = [...this.inflight.keys()];
          // a full lane's hooks are left out of the query, so they take no place from the other lane's
          if (slowFree <= 0) for (const id of this.slow) if (!this.inflight.has(id)) busy.push(id);
          const only = fastFree > 0 ? undefined : [...this.slow];
          let fast = Math.max(0, fastFree);
          let slow = Math.max(0, slowFree);
          for (const d of await dueDeliveries(this.sql, fast + slow, busy, only)) {
            const inSlowLane = this.slow.has(d.hook_id);
            if (inSlowLane ? slow <= 0 : fast <= 0) continue;
            if (inSlowLane) {
              slow--;
              this.inflightSlow.add(d.hook_id);
            } else fast--;
            started++;
            this.inflight.set(
              d.hook_id,
              this.deliver(d)
                .catch((err: unknown) => this.log.warn({ err, delivery: d.id }, 'hooks: delivery bookkeeping failed'))
                .finally(() => {
                  this.inflight.delete(d.hook_id);
                  this.inflightSlow.delete(d.hook_id);
                  this.kickDelivery();
                }),
            );
          }
        }
        pause = 250;
        if (!started && !this.deliveryKicked) {
          const at = fastFree > 0 || slowFree > 0 ? await nextDueAt(this.sql) : null;
          const wait = at ? Math.max(10, Math.min(1000, at.getTime() - Date.now())) : 1000;
          await this.sleep(wait, 'delivery');
        }
      } catch (err) {
        this.log.error({ err }, 'hooks: delivery loop failed (retrying)');
        await this.sleep(pause, 'delivery');
        pause = Math.min(pause * 2, 30_000);
      }
    }
  }

  /**
   * Records an attempt. Attempts answered at about the same time are written together, in one statement (the
   * delivery's place stays taken until its attempt is written, so a hook's next delivery never overtakes it).
   */
  private record(a: AttemptRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.toRecord.push({ a, resolve, reject });
      if (!this.recording) this.recording = this.writeAttempts();
    });
  }

  private async writeAttempts(): Promise<void> {
    // let the answers of the same moment join
    await new Promise((r) => setImmediate(r));
    while (this.toRecord.length) {
      const batch = this.toRecord.splice(0);
      try {
        await recordAttempts(this.sql, batch.map((b) => b.a));
        for (const b of batch) b.resolve();
      } catch (err) {
        if (batch.length === 1) {
          batch[0].reject(err);
          continue;
        }
        // one at a time, so one bad row fails only its own delivery
        for (const b of batch) await recordAttempts(this.sql, [b.a]).then(b.resolve, b.reject);
      }
    }
    this.recording = undefined;
  }

  private async deliver(d: DueDelivery): Promise<void> {
    const attempt = d.attempts + 1;
    const payload = hookPayload({ id: String(d.id), action: d.action, block: d.block as ChainhookBlock }, { uuid: d.uuid, predicate: d.predicate as unknown as HookPredicate }, true);
    const body = JSON.stringify(payload);
    if (attempt === 1) {
      try {
        this.onPayload?.(d.uuid, d.id, payload);
      } catch (err) {
        this.log.warn({ err }, 'hooks: push of a payload failed');
      }
    }
    const started = performance.now();
    const slowAfter = Math.min(SLOW_MS, this.opts.timeoutMs / 2);
    // still unanswered after slowAfter: the hook moves to the slow lane now, its place in the other is given back
    const promote = setTimeout(() => {
      if (this.inflightSlow.has(d.hook_id) || !this.inflight.has(d.hook_id)) return;
      this.slow.add(d.hook_id);
      this.inflightSlow.add(d.hook_id);
      this.kickDelivery();
    }, slowAfter);
    promote.unref?.();
    let status: number | null = null;
    let error: string | null = null;
    if (!hostAllowed(d.url, this.opts.allowedHosts)) error = 'host not in HOOKS_ALLOWED_HOSTS';
    else {
      try {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signBody(d.secret, body),
          [DELIVERY_HEADER]: String(d.id),
          [HOOK_HEADER]: d.uuid,
        };
        if (d.authorization_header) headers.authorization = d.authorization_header;
        const res = await fetch(d.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(this.opts.timeoutMs) });
        status = res.status;
        await res.arrayBuffer().catch(() => undefined);
        if (status < 200 || status >= 300) error = `receiver answered ${status}`;
      } catch (err) {
        const e = err as Error & { cause?: { code?: string; message?: string } };
        error = e.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs} ms` : e.cause?.code ?? e.cause?.message ?? e.message;
      }
    }
    clearTimeout(promote);
    const ms = Math.round(performance.now() - started);
    const retry = Math.min(this.opts.retryMaxMs, this.opts.retryMinMs * 2 ** Math.min(30, attempt - 1));
    if (error) this.log.debug({ hook: d.uuid, delivery: d.id, attempt, error, retry_ms: retry }, 'hooks: delivery failed');
    // a receiver that failed or was slow waits in the slow lane until it answers quickly again
    if (error !== null || ms > slowAfter) this.slow.add(d.hook_id);
    else this.slow.delete(d.hook_id);
    await this.record({ delivery_id: d.id, attempt, status_code: status, error, ms, delivered: error === null, retry_in_ms: retry });
  }

  private sleep(ms: number, which: 'evaluator' | 'delivery'): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref?.();
      const self = this;
      function done() {
        clearTimeout(timer);
        if (which === 'evaluator') self.wakeEvaluator = undefined;
        else self.wakeDelivery = undefined;
        resolve();
      }
      if (which === 'evaluator') this.wakeEvaluator = done;
      else this.wakeDelivery = done;
    });
  }
}
