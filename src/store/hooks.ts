/**
 * Hooks (sql/0140_hooks.sql): registered predicates, the chain journal the projector writes in its transaction, the
 * per-hook delivery outbox and its attempts. Every SQL statement of the hooks feature is here.
 */
import type { Sql } from './sql.js';

/** A hook's stored options (src/hooks/predicate.ts HookPredicate: if_this, start_block, end_block, …). */
export type StoredPredicate = { if_this: { scope: string } & Record<string, unknown> } & Record<string, unknown>;

/** One event of a tx, as stored (the columns of `events` a predicate reads). */
export interface HookEvent {
  event_index: number;
  event_type: string;
  asset_event_type: string | null;
  asset_identifier: string | null;
  contract_id: string | null;
  topic: string | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  value_hex: string | null;
  locked_address: string | null;
  unlock_height: string | null;
  /** the reference's JSON of the event (repr of Clarity values) */
  api: Record<string, unknown>;
}

/** One tx of a block, as stored. */
export interface HookTx {
  tx_id: string;
  tx_index: number;
  tx_type: string;
  status: string;
  sender_address: string;
  nonce: string;
  fee_rate: string;
  raw_tx: string;
  raw_result: string;
  contract_call_contract_id: string | null;
  smart_contract_contract_id: string | null;
  contract_abi: unknown;
  api: Record<string, unknown>;
  events: HookEvent[];
}

/** One anchored block with its txs (microblock txs it confirmed included), as stored. */
export interface HookBlock {
  index_block_hash: string;
  block_hash: string;
  block_height: number;
  block_time: number;
  parent_index_block_hash: string;
  parent_block_hash: string;
  burn_block_hash: string;
  burn_block_height: number;
  burn_block_time: number;
  txs: HookTx[];
}


export type HookStatus = 'active' | 'paused' | 'expired';

export interface HookRow {
  id: number;
  uuid: string;
  owner: string;
  name: string;
  version: number;
  network: string;
  predicate: StoredPredicate;
  url: string;
  authorization_header: string | null;
  secret: string;
  status: HookStatus;
  occurrences: number;
  from_seq: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface ChainChange {
  action: 'apply' | 'rollback';
  index_block_hash: string;
}

export interface JournalRow {
  seq: number;
  action: 'apply' | 'rollback';
  index_block_hash: string;
  block_height: number;
}

const HOOK_COLUMNS = 'id, uuid, owner, name, version, network, predicate, url, authorization_header, secret, status, occurrences, from_seq, created_at, updated_at';

function hookRow(r: Record<string, unknown>): HookRow {
  return {
    ...(r as unknown as HookRow),
    id: Number(r.id),
    occurrences: Number(r.occurrences),
    from_seq: r.from_seq === null ? null : Number(r.from_seq),
  };
}

// ---- written by the projector, in its transaction ----------------------------------------------------------------

/**
 * Appends the blocks a projection made canonical or orphaned to the journal. `group` orders the changes (one group per
 * message and kind, in log order); within a group rollbacks go highest block first, applies lowest first, so a
 * reorg's rollbacks precede the new branch's applies. One statement.
 */
export async function journalChainChanges(tx: Sql, changes: (ChainChange & { group: number })[]): Promise<void> {
  if (!changes.length) return;
  await tx`
    INSERT INTO hook_chain (action, index_block_hash, block_height)
    SELECT u.action, u.h, b.block_height
    FROM unnest(${changes.map((c) => c.action)}::text[], ${changes.map((c) => c.index_block_hash)}::text[],
                ${changes.map((c) => c.group)}::int[]) WITH ORDINALITY AS u(action, h, grp, ord)
    JOIN blocks b ON b.index_block_hash = u.h
    ORDER BY u.grp, CASE WHEN u.action = 'rollback' THEN -b.block_height ELSE b.block_height END, u.ord`;
}

// ---- the evaluator -----------------------------------------------------------------------------------------------

export async function hookCursor(sql: Sql): Promise<number> {
  const [r] = await sql<{ seq: string }[]>`SELECT seq FROM hook_cursor`;
  return r ? Number(r.seq) : 0;
}

export async function journalAfter(sql: Sql, seq: number, limit: number): Promise<JournalRow[]> {
  const rows = await sql<{ seq: string; action: 'apply' | 'rollback'; index_block_hash: string; block_height: string }[]>`
    SELECT seq, action, index_block_hash, block_height FROM hook_chain WHERE seq > ${seq} ORDER BY seq LIMIT ${limit}`;
  return rows.map((r) => ({ seq: Number(r.seq), action: r.action, index_block_hash: r.index_block_hash, block_height: Number(r.block_height) }));
}

/** The journal's newest seq (or the cursor's, once the journal is consumed and pruned). */
export async function journalHead(sql: Sql): Promise<number> {
  const [r] = await sql<{ seq: string }[]>`
    SELECT GREATEST(COALESCE((SELECT max(seq) FROM hook_chain), 0), COALESCE((SELECT seq FROM hook_cursor), 0)) AS seq`;
  return Number(r.seq);
}

/** Moves the evaluator's cursor and drops the journal rows it has consumed. */
export async function advanceHookCursor(tx: Sql, seq: number): Promise<void> {
  await tx`INSERT INTO hook_cursor (id, seq) VALUES (true, ${seq}) ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq`;
  await tx`DELETE FROM hook_chain WHERE seq <= ${seq}`;
}

/** Hooks the evaluator follows: not expired, their history settled (from_seq set). */
export async function liveHooks(sql: Sql): Promise<HookRow[]> {
  const rows = await sql.unsafe(`SELECT ${HOOK_COLUMNS} FROM hooks WHERE status <> 'expired' AND from_seq IS NOT NULL ORDER BY id`);
  return rows.map(hookRow);
}

/** Hooks created since the evaluator last looked: their history is evaluated before they follow the journal. */
export async function unsettledHooks(sql: Sql): Promise<HookRow[]> {
  const rows = await sql.unsafe(`SELECT ${HOOK_COLUMNS} FROM hooks WHERE from_seq IS NULL ORDER BY id`);
  return rows.map(hookRow);
}

/** A cheap fingerprint of the hooks table: the evaluator rebuilds its index when it changes. */
export async function hooksVersion(sql: Sql): Promise<string> {
  const [r] = await sql<{ v: string }[]>`SELECT count(*)::text || ':' || COALESCE(max(updated_at)::text, '') || ':' || COALESCE(sum(id)::text, '') AS v FROM hooks`;
  return r.v;
}

export async function settleHook(tx: Sql, id: number, fromSeq: number): Promise<void> {
  await tx`UPDATE hooks SET from_seq = ${fromSeq} WHERE id = ${id}`;
}

/** Canonical blocks with heights in [from, to], lowest first. */
export async function canonicalBlockHashes(sql: Sql, from: number, to: number): Promise<string[]> {
  const rows = await sql<{ h: string }[]>`
    SELECT index_block_hash AS h FROM blocks WHERE canonical AND block_height BETWEEN ${from} AND ${to} ORDER BY block_height`;
  return rows.map((r) => r.h);
}

export async function canonicalTipHeight(sql: Sql): Promise<number> {
  const [r] = await sql<{ h: string | null }[]>`SELECT max(block_height) AS h FROM blocks WHERE canonical`;
  return r.h === null ? -1 : Number(r.h);
}

/**
 * Which txs of a block a predicate could match, as SQL can tell from the columns alone (a superset: the evaluator
 * still decides). `every`: no narrowing (block_height, deployments by trait).
 */
export type HookTxFilter =
  | { every: true }
  | { txId: string }
  | { calledContract: string }
  | { deployments: true }
  | { eventTypes: string[]; contractId?: string; assetIdentifier?: string };

/** A tx of a block, by the keys of `txs`. */
interface TxKey {
  h: string;
  m: string;
  t: string;
}

/** The txs of these blocks that may match the filter (included microblock txs too). */
async function candidateTxs(sql: Sql, hashes: string[], f: Exclude<HookTxFilter, { every: true }>): Promise<TxKey[]> {
  if ('eventTypes' in f) {
    return sql<TxKey[]>`
      SELECT DISTINCT index_block_hash AS h, microblock_hash AS m, tx_id AS t FROM events
      WHERE index_block_hash = ANY(${hashes}) AND microblock_canonical AND event_type = ANY(${f.eventTypes})
        ${f.contractId !== undefined ? sql`AND contract_id = ${f.contractId}` : sql``}
        ${f.assetIdentifier !== undefined ? sql`AND asset_identifier = ${f.assetIdentifier}` : sql``}`;
  }
  const cond =
    'txId' in f ? sql`tx_id = ${f.txId}` : 'calledContract' in f ? sql`contract_call_contract_id = ${f.calledContract}` : sql`tx_type = 'smart_contract'`;
  return sql<TxKey[]>`
    SELECT index_block_hash AS h, microblock_hash AS m, tx_id AS t FROM txs
    WHERE index_block_hash = ANY(${hashes}) AND microblock_canonical AND ${cond}`;
}

/**
 * For a history evaluation: the blocks among `hashes` holding a tx the filter lets through, each with those txs only
 * (and all their events). Set-based: one statement finds the candidates of every block at once, and only their rows
 * are read, instead of every tx and event of every block.
 */
export async function loadHookCandidates(sql: Sql, hashes: string[], f: HookTxFilter): Promise<Map<string, HookBlock>> {
  if ('every' in f) return loadHookBlocks(sql, hashes);
  const keys = await candidateTxs(sql, hashes, f);
  if (!keys.length) return new Map();
  return loadHookBlocks(sql, [...new Set(keys.map((k) => k.h))], keys);
}

/**
 * Blocks with the txs they included (their confirmed microblock txs too) and those txs' events, in chain order (the
 * confirmed microblock txs first, stream order, then the block's own; tx_index alone ties between the two);
 * with `only`, just those txs.
 */
export async function loadHookBlocks(sql: Sql, hashes: string[], only?: TxKey[]): Promise<Map<string, HookBlock>> {
  const out = new Map<string, HookBlock>();
  if (!hashes.length) return out;
  const onlyTxs = (alias: string) =>
    only
      ? sql`AND (${sql(alias)}.index_block_hash, ${sql(alias)}.microblock_hash, ${sql(alias)}.tx_id) IN (
              SELECT * FROM unnest(${only.map((k) => k.h)}::text[], ${only.map((k) => k.m)}::text[], ${only.map((k) => k.t)}::text[]))`
      : sql``;
  const blocks = await sql<Record<string, unknown>[]>`
    SELECT index_block_hash, block_hash, block_height, block_time, parent_index_block_hash, parent_block_hash,
           burn_block_hash, burn_block_height, burn_block_time
    FROM blocks WHERE index_block_hash = ANY(${hashes})`;
  for (const b of blocks) {
    out.set(String(b.index_block_hash), {
      index_block_hash: String(b.index_block_hash),
      block_hash: String(b.block_hash),
      block_height: Number(b.block_height),
      block_time: Number(b.block_time),
      parent_index_block_hash: String(b.parent_index_block_hash),
      parent_block_hash: String(b.parent_block_hash),
      burn_block_hash: String(b.burn_block_hash),
      burn_block_height: Number(b.burn_block_height),
      burn_block_time: Number(b.burn_block_time),
      txs: [],
    });
  }
  const txs = await sql<(Omit<HookTx, 'events' | 'nonce' | 'fee_rate'> & { index_block_hash: string; microblock_hash: string; nonce: string; fee_rate: string })[]>`
    SELECT index_block_hash, microblock_hash, tx_id, tx_index, tx_type, status, sender_address, nonce::text AS nonce,
           fee_rate::text AS fee_rate, raw_tx, raw_result, contract_call_contract_id, smart_contract_contract_id,
           contract_abi, api
    FROM txs x WHERE index_block_hash = ANY(${hashes}) AND microblock_canonical ${onlyTxs('x')}
    ORDER BY index_block_hash, microblock_sequence, tx_index`;
  const byKey = new Map<string, HookTx>();
  for (const t of txs) {
    const { index_block_hash, microblock_hash, ...rest } = t;
    const tx: HookTx = { ...rest, tx_index: Number(rest.tx_index), events: [] };
    byKey.set(`${index_block_hash}|${microblock_hash}|${tx.tx_id}`, tx);
    out.get(index_block_hash)?.txs.push(tx);
  }
  const events = await sql<(HookEvent & { index_block_hash: string; microblock_hash: string; tx_id: string })[]>`
    SELECT index_block_hash, microblock_hash, tx_id, event_index, event_type, asset_event_type, asset_identifier,
           contract_id, topic, sender, recipient, amount::text AS amount, value_hex, locked_address,
           unlock_height::text AS unlock_height, api
    FROM events x WHERE index_block_hash = ANY(${hashes}) AND microblock_canonical ${onlyTxs('x')}
    ORDER BY index_block_hash, tx_index, event_index`;
  for (const e of events) {
    const { index_block_hash, microblock_hash, tx_id, ...rest } = e;
    byKey.get(`${index_block_hash}|${microblock_hash}|${tx_id}`)?.events.push(rest as HookEvent);
  }
  return out;
}

/**
 * A predicate SQL can decide exactly (the same answer as src/hooks/evaluate.ts txMatches with the index in front of
 * it), for history built in the database (insertHistoryDeliveries). A predicate it cannot decide exactly (print
 * `matches_regex` other than a literal, optionally anchored: RE2 is not PostgreSQL's regular expression engine) is
 * not given one.
 */
export type HookSqlMatch =
  | { txId: string }
  | { calledContract: string; method: string }
  | { deployer: string }
  /** deployments whose ABI has every function of one of these lists (non-private) */
  | { traitFunctions: string[][] }
  /** `text`: the printed value's Clarity text holds it (anywhere, or at its `start` and/or `end`) */
  | { printContract: string; text?: { value: string; start: boolean; end: boolean } }
  | { tokenEvent: 'fungible_token_asset' | 'non_fungible_token_asset'; assetIdentifier: string; actions: string[] }
  | { stxActions: string[]; lock: boolean }
  | { heights: { equals?: number; higher_than?: number; lower_than?: number; between?: [number, number] } };

/** The events of the tx aliased `t` (its microblock-canonical ones). */
function sameTxOf(sql: Sql) {
  return sql`e.index_block_hash = t.index_block_hash AND e.microblock_hash = t.microblock_hash AND e.tx_id = t.tx_id AND e.microblock_canonical`;
}

function sqlMatchCondition(sql: Sql, m: HookSqlMatch, range: { from: number; to: number }) {
  const TOKEN_ACTIONS = ['transfer', 'mint', 'burn'];
  // the events of the range's blocks only (events_block): without it the planner may hash every event of the chain
  const sameTx = (q: Sql) => q`${sameTxOf(q)} AND e.index_block_hash = ANY(ARRAY(
      SELECT index_block_hash FROM blocks WHERE canonical AND block_height BETWEEN ${range.from} AND ${range.to}))`;
  if ('txId' in m) return sql`t.tx_id = ${m.txId}`;
  if ('calledContract' in m) {
    return sql`t.tx_type = 'contract_call' AND t.contract_call_contract_id = ${m.calledContract}
               AND (t.api::jsonb -> 'contract_call' -> 'function_name') = to_jsonb(${m.method}::text)`;
  }
  if ('deployer' in m) {
    return sql`t.tx_type = 'smart_contract' AND t.status = 'success' ${m.deployer === '*' ? sql`` : sql`AND t.sender_address = ${m.deployer}`}`;
  }
  if ('traitFunctions' in m) {
    // evaluate.ts implementsTrait: the ABI's functions that are not private name every function of a list
    const has = (names: string[]) => sql`(SELECT count(DISTINCT f ->> 'name') FROM json_array_elements(
        CASE WHEN json_typeof(t.contract_abi -> 'functions') = 'array' THEN t.contract_abi -> 'functions' ELSE '[]'::json END) AS f
      WHERE (f ->> 'access') IS DISTINCT FROM 'private' AND (f ->> 'name') = ANY(${names}::text[])) = ${new Set(names).size}`;
    const [first, second] = m.traitFunctions;
    return sql`t.tx_type = 'smart_contract' AND t.status = 'success' AND t.contract_abi IS NOT NULL
               AND (${has(first)} ${second ? sql`OR ${has(second)}` : sql``})`;
  }
  if ('printContract' in m) {
    // evaluate.ts printRepr: the printed value's repr when it is a string, '' otherwise; `contains` and a literal
    // `matches_regex` are plain text tests (strpos compares bytes of UTF-8, String.includes code units of UTF-16:
    // the same matches)
    const repr = sql`CASE WHEN json_typeof(json_extract_path(e.api, 'contract_log', 'value', 'repr')) = 'string'
                          THEN json_extract_path_text(e.api, 'contract_log', 'value', 'repr') ELSE '' END`;
    const t = m.text;
    const text =
      t === undefined
        ? sql``
        : t.start && t.end
          ? sql`AND ${repr} = ${t.value}::text`
          : t.start
            ? sql`AND starts_with(${repr}, ${t.value}::text)`
            : t.end
              ? sql`AND right(${repr}, char_length(${t.value}::text)) = ${t.value}::text`
              : sql`AND strpos(${repr}, ${t.value}::text) > 0`;
    return sql`EXISTS (SELECT 1 FROM events e WHERE ${sameTx(sql)} AND e.event_type = 'smart_contract_log'
               AND ${m.printContract === '*' ? sql`e.contract_id <> ''` : sql`e.contract_id = ${m.printContract}`} ${text})`;
  }
  if ('tokenEvent' in m) {
    return sql`EXISTS (SELECT 1 FROM events e WHERE ${sameTx(sql)} AND e.event_type = ${m.tokenEvent}
               AND e.asset_identifier = ${m.assetIdentifier} AND e.asset_event_type = ANY(${m.actions.filter((a) => TOKEN_ACTIONS.includes(a))}::text[]))`;
  }
  if ('stxActions' in m) {
    return sql`EXISTS (SELECT 1 FROM events e WHERE ${sameTx(sql)} AND (
                 (e.event_type = 'stx_asset' AND e.asset_event_type = ANY(${m.stxActions.filter((a) => TOKEN_ACTIONS.includes(a))}::text[]))
                 ${m.lock ? sql`OR e.event_type = 'stx_lock'` : sql``}))`;
  }
  const h = m.heights;
  if (h.equals !== undefined) return sql`b.block_height = ${h.equals}`;
  if (h.higher_than !== undefined) return sql`b.block_height > ${h.higher_than}`;
  if (h.lower_than !== undefined) return sql`b.block_height < ${h.lower_than}`;
  return sql`b.block_height BETWEEN ${h.between![0]} AND ${h.between![1]}`;
}

/**
 * A chunk of a hook's history, matched and built in the database (sql/functions/hooks.sql) and written in
 * one statement: per canonical block with a height in [from, to] holding a matching tx, one apply delivery whose
 * block is what src/hooks/payload.ts chainhookBlock makes of its matching txs, in chain order. Nothing is written
 * when a payload block would not fit in `maxBlockChars` (`oversized`: the caller splits that chunk itself), nor for a
 * hook deleted meanwhile; with `maxBlocks`, only the first so many matching blocks (the occurrences left before the
 * hook expires). Occurrences are counted as insertDeliveries counts them. `blocks`: the canonical blocks of
 * the range (evaluated).
 */
export async function insertHistoryDeliveries(
  tx: Sql,
  hookId: number,
  range: { from: number; to: number },
  m: HookSqlMatch,
  o: { decode: boolean; contractAbi: boolean; maxBlockChars: number; maxBlocks?: number },
): Promise<{ inserted: number; oversized: boolean; blocks: number }> {
  // JSON text put together by concatenation, in payload.ts's key order (sql/functions/hooks.sql); validated once, as
  // json, when written
  const abi = o.contractAbi
    ? tx`, CASE WHEN t.contract_abi IS NOT NULL AND t.contract_abi::jsonb NOT IN ('null', 'false', '0', '""')
                THEN ',"contract_abi":' || t.contract_abi::text ELSE '' END`
    : tx``;
  const result = o.decode
    ? tx`COALESCE(NULLIF(json_extract_path(t.api, 'tx_result', 'repr')::text, 'null'), to_json(t.raw_result)::text)`
    : tx`to_json(t.raw_result)::text`;
  const [r] = await tx<{ inserted: string; oversized: boolean; blocks: string }[]>`
    WITH matched AS (
      SELECT b.index_block_hash, b.block_height, t.microblock_hash, t.tx_id, t.tx_index
      FROM blocks b JOIN txs t ON t.index_block_hash = b.index_block_hash AND t.microblock_canonical
      WHERE b.canonical AND b.block_height BETWEEN ${range.from} AND ${range.to} AND ${sqlMatchCondition(tx, m, range)}
    ),
    -- each matching tx as payload.ts chainhookTx makes it
    payload_txs AS (
      SELECT t.index_block_hash, t.microblock_sequence, t.tx_index, concat(
        '{"transaction_identifier":{"hash":', to_json(t.tx_id)::text, '},"operations":[],"metadata":{"success":',
        CASE WHEN t.status = 'success' THEN 'true' ELSE 'false' END,
        ',"raw_tx":', to_json(t.raw_tx)::text,
        ',"result":', ${result},
        ',"sender":', to_json(t.sender_address)::text,
        ',"nonce":', t.nonce::text,
        ',"fee":', t.fee_rate::text,
        ',"kind":', hook_tx_kind_text(t.tx_type, t.contract_call_contract_id, t.smart_contract_contract_id, t.api),
        ',"receipt":{"mutated_contracts_radius":', ev.contracts,
        ',"mutated_assets_radius":', ev.assets,
        ',"contract_calls_stack":[],"events":', ev.events,
        '},"description":', to_json(t.tx_type)::text,
        ',"position":{"index":', t.tx_index::text, '},"proof":null'
        ${abi}, '}}') AS tx
      FROM matched k
      JOIN txs t ON t.index_block_hash = k.index_block_hash AND t.microblock_hash = k.microblock_hash AND t.tx_id = k.tx_id
      CROSS JOIN LATERAL (
        SELECT '[' || COALESCE(ev0.events, '') || ']' AS events,
          -- the contracts and assets the events name, each once, in the order they first appear
          COALESCE((SELECT json_agg(u.c ORDER BY u.i) FROM (
                      SELECT c, min(i) AS i FROM unnest(ev0.cs) WITH ORDINALITY AS x(c, i) GROUP BY c) u)::text, '[]') AS contracts,
          COALESCE((SELECT json_agg(u.c ORDER BY u.i) FROM (
                      SELECT c, min(i) AS i FROM unnest(ev0.ass) WITH ORDINALITY AS x(c, i) GROUP BY c) u)::text, '[]') AS assets
        FROM (
          SELECT
            string_agg(hook_event_text(e.event_index, e.event_type, e.asset_event_type, e.asset_identifier, e.contract_id, e.topic,
                         e.sender, e.recipient, e.amount, e.value_hex, e.locked_address, e.unlock_height, e.api, ${o.decode}::boolean),
                       ',' ORDER BY e.event_index) AS events,
            array_agg(e.contract_id ORDER BY e.event_index) FILTER (WHERE e.contract_id <> '') AS cs,
            array_agg(e.asset_identifier ORDER BY e.event_index) FILTER (WHERE e.asset_identifier <> '') AS ass
          FROM events e WHERE ${sameTxOf(tx)}
        ) ev0
      ) ev
    ),
    -- each block with its matching txs as payload.ts chainhookBlock makes it
    built AS MATERIALIZED (
      SELECT b.index_block_hash, b.block_height, concat(
        '{"block_identifier":{"index":', b.block_height::text, ',"hash":', to_json(b.index_block_hash)::text,
        '},"parent_block_identifier":{"index":', GREATEST(0, b.block_height - 1)::text, ',"hash":', to_json(b.parent_index_block_hash)::text,
        '},"timestamp":', b.block_time::text,
        ',"transactions":[', p.txs,
        '],"metadata":{"bitcoin_anchor_block_identifier":{"index":', b.burn_block_height::text, ',"hash":', to_json(b.burn_block_hash)::text,
        '},"stacks_block_hash":', to_json(b.block_hash)::text,
        ',"block_time":', b.block_time::text, '}}') AS block
      FROM (SELECT index_block_hash, string_agg(tx, ',' ORDER BY microblock_sequence, tx_index) AS txs FROM payload_txs GROUP BY index_block_hash) p
      JOIN blocks b ON b.index_block_hash = p.index_block_hash
    ),
    over AS (SELECT EXISTS (SELECT 1 FROM built WHERE octet_length(block) > ${o.maxBlockChars}) AS oversized),
    ins AS (
      INSERT INTO hook_deliveries (hook_id, action, index_block_hash, block_height, block)
      SELECT ${hookId}, 'apply', index_block_hash, block_height, block::json FROM built
      WHERE NOT (SELECT oversized FROM over) AND EXISTS (SELECT 1 FROM hooks WHERE id = ${hookId}) -- a hook deleted meanwhile gets nothing
      ORDER BY block_height
      LIMIT ${o.maxBlocks ?? null}
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM ins) AS inserted, (SELECT oversized FROM over) AS oversized,
      (SELECT count(*) FROM blocks WHERE canonical AND block_height BETWEEN ${range.from} AND ${range.to}) AS blocks`;
  const inserted = Number(r.inserted);
  if (inserted) await countOccurrences(tx, new Map([[hookId, inserted]]));
  return { inserted, oversized: r.oversized, blocks: Number(r.blocks) };
}

export interface NewDelivery {
  hook_id: number;
  action: 'apply' | 'rollback';
  index_block_hash: string;
  block_height: number;
  block: unknown;
}

/** Appends deliveries (in the order given: per hook, chain order) and counts the applies as occurrences. */
export async function insertDeliveries(tx: Sql, deliveries: NewDelivery[]): Promise<void> {
  if (!deliveries.length) return;
  for (let i = 0; i < deliveries.length; i += 1000) {
    const part = deliveries.slice(i, i + 1000);
    await tx`
      INSERT INTO hook_deliveries (hook_id, action, index_block_hash, block_height, block)
      SELECT u.hook_id, u.action, u.h, u.height, u.block::json
      FROM unnest(${part.map((d) => d.hook_id)}::bigint[], ${part.map((d) => d.action)}::text[],
                  ${part.map((d) => d.index_block_hash)}::text[], ${part.map((d) => d.block_height)}::bigint[],
                  ${part.map((d) => JSON.stringify(d.block))}::text[]) WITH ORDINALITY AS u(hook_id, action, h, height, block, ord)
      JOIN hooks k ON k.id = u.hook_id -- a hook deleted meanwhile gets nothing
      ORDER BY u.ord`;
  }
  const counts = new Map<number, number>();
  for (const d of deliveries) if (d.action === 'apply') counts.set(d.hook_id, (counts.get(d.hook_id) ?? 0) + 1);
  await countOccurrences(tx, counts);
}

/** Adds matching blocks (apply deliveries) to hooks' occurrences, expiring those that reach expire_after_occurrence. */
async function countOccurrences(tx: Sql, counts: Map<number, number>): Promise<void> {
  if (!counts.size) return;
  await tx`
    UPDATE hooks h SET occurrences = h.occurrences + u.n,
      status = CASE WHEN (h.predicate->>'expire_after_occurrence')::bigint <= h.occurrences + u.n THEN 'expired' ELSE h.status END,
      updated_at = CASE WHEN (h.predicate->>'expire_after_occurrence')::bigint <= h.occurrences + u.n THEN now() ELSE h.updated_at END
    FROM unnest(${[...counts.keys()]}::bigint[], ${[...counts.values()]}::bigint[]) AS u(id, n)
    WHERE h.id = u.id`;
}

/**
 * For a block leaving the canonical chain: per hook, the payload blocks it was sent for it since its last rollback
 * of it (the rollback carries the txs that had matched), last part first.
 */
export async function appliedDeliveriesOf(sql: Sql, indexBlockHash: string): Promise<{ hook_id: number; block_height: number; block: unknown }[]> {
  const rows = await sql<{ hook_id: string; block_height: string; block: unknown }[]>`
    SELECT d.hook_id, d.block_height, d.block FROM hook_deliveries d
    WHERE d.index_block_hash = ${indexBlockHash} AND d.action = 'apply'
      AND d.id > COALESCE((SELECT max(r.id) FROM hook_deliveries r
                           WHERE r.index_block_hash = ${indexBlockHash} AND r.hook_id = d.hook_id AND r.action = 'rollback'), 0)
    ORDER BY d.hook_id, d.id DESC`;
  return rows.map((r) => ({ hook_id: Number(r.hook_id), block_height: Number(r.block_height), block: r.block }));
}

// ---- the delivery worker -----------------------------------------------------------------------------------------

export interface DueDelivery {
  id: number;
  hook_id: number;
  action: 'apply' | 'rollback';
  block: unknown;
  attempts: number;
  uuid: string;
  predicate: StoredPredicate;
  url: string;
  authorization_header: string | null;
  secret: string;
}

/**
 * Per hook that is not paused, its oldest pending delivery when it is due; hooks in `busy` are left out (with `only`,
 * only those hooks are asked). The heads
 * are found by skipping through the pending index from hook to hook (one probe per hook with something pending), not
 * by asking every registered hook: the delivery loop runs this after each answer, with thousands of hooks idle.
 */
export async function dueDeliveries(sql: Sql, limit: number, busy: number[], only?: number[]): Promise<DueDelivery[]> {
  const rows = await sql<Record<string, unknown>[]>`
    WITH RECURSIVE heads AS (
      (SELECT hook_id, id FROM hook_deliveries WHERE status = 'pending' ORDER BY hook_id, id LIMIT 1)
      UNION ALL
      SELECT n.hook_id, n.id FROM heads p
      CROSS JOIN LATERAL (
        SELECT hook_id, id FROM hook_deliveries WHERE status = 'pending' AND hook_id > p.hook_id ORDER BY hook_id, id LIMIT 1
      ) n
    )
    SELECT d.id, d.hook_id, d.action, d.block, d.attempts, h.uuid, h.predicate, h.url, h.authorization_header, h.secret
    FROM heads
    JOIN hook_deliveries d ON d.id = heads.id
    JOIN hooks h ON h.id = heads.hook_id
    WHERE h.status <> 'paused' AND d.next_attempt_at <= now() AND NOT (heads.hook_id = ANY(${busy}::bigint[]))
      ${only ? sql`AND heads.hook_id = ANY(${only}::bigint[])` : sql``}
    ORDER BY d.next_attempt_at, d.id
    LIMIT ${limit}`;
  return rows.map((r) => ({ ...(r as unknown as DueDelivery), id: Number(r.id), hook_id: Number(r.hook_id) }));
}

/** When the next pending delivery falls due (null: none pending). */
export async function nextDueAt(sql: Sql): Promise<Date | null> {
  const [r] = await sql<{ at: Date | null }[]>`
    SELECT min(d.next_attempt_at) AS at FROM hook_deliveries d JOIN hooks h ON h.id = d.hook_id
    WHERE d.status = 'pending' AND h.status <> 'paused'`;
  return r.at;
}

export interface AttemptRecord {
  delivery_id: number;
  attempt: number;
  status_code: number | null;
  error: string | null;
  ms: number;
  delivered: boolean;
  retry_in_ms: number;
}

/**
 * Records the attempts answered since the last call, in one statement: each attempt's row, and its delivery marked
 * delivered or given its next attempt time. A delivery deleted meanwhile (its hook removed) is skipped.
 */
export async function recordAttempts(sql: Sql, attempts: AttemptRecord[]): Promise<void> {
  if (!attempts.length) return;
  await sql`
    WITH a AS (
      -- (postgres.js sends no boolean arrays: delivered is 1 or 0)
      SELECT u.delivery_id, u.attempt, u.status_code, u.error, u.ms, u.delivered = 1 AS delivered, u.retry_in_ms
      FROM unnest(${attempts.map((a) => a.delivery_id)}::bigint[], ${attempts.map((a) => a.attempt)}::int[],
                  ${attempts.map((a) => a.status_code)}::int[], ${attempts.map((a) => a.error)}::text[],
                  ${attempts.map((a) => a.ms)}::int[], ${attempts.map((a) => (a.delivered ? 1 : 0))}::int[],
                  ${attempts.map((a) => a.retry_in_ms)}::bigint[])
        AS u(delivery_id, attempt, status_code, error, ms, delivered, retry_in_ms)
      JOIN hook_deliveries d ON d.id = u.delivery_id
    ),
    tried AS (
      INSERT INTO hook_attempts (delivery_id, attempt, status_code, error, ms)
      SELECT delivery_id, attempt, status_code, error, ms FROM a
      ON CONFLICT DO NOTHING
    )
    UPDATE hook_deliveries d SET
      attempts = a.attempt,
      status = CASE WHEN a.delivered THEN 'delivered' ELSE d.status END,
      delivered_at = CASE WHEN a.delivered THEN now() ELSE d.delivered_at END,
      next_attempt_at = CASE WHEN a.delivered THEN d.next_attempt_at ELSE now() + a.retry_in_ms * interval '1 millisecond' END
    FROM a WHERE d.id = a.delivery_id`;
}

// ---- the management API ------------------------------------------------------------------------------------------

export async function countHooks(sql: Sql, owner: string): Promise<number> {
  const [r] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM hooks WHERE owner = ${owner}`;
  return Number(r.n);
}

export async function insertHook(
  sql: Sql,
  h: { uuid: string; owner: string; name: string; version: number; network: string; predicate: StoredPredicate; url: string; authorization_header: string | null; secret: string },
): Promise<HookRow | undefined> {
  const rows = await sql.unsafe(
    `INSERT INTO hooks (uuid, owner, name, version, network, predicate, url, authorization_header, secret)
     VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7, $8, $9) ON CONFLICT (uuid) DO NOTHING RETURNING ${HOOK_COLUMNS}`,
    [h.uuid, h.owner, h.name, h.version, h.network, JSON.stringify(h.predicate), h.url, h.authorization_header, h.secret],
  );
  return rows[0] ? hookRow(rows[0]) : undefined;
}

export async function ownedHooks(sql: Sql, owner: string, limit: number, offset: number): Promise<{ total: number; rows: HookRow[] }> {
  const rows = await sql.unsafe(`SELECT ${HOOK_COLUMNS} FROM hooks WHERE owner = $1 ORDER BY id LIMIT $2 OFFSET $3`, [owner, limit, offset]);
  return { total: await countHooks(sql, owner), rows: rows.map(hookRow) };
}

export async function ownedHook(sql: Sql, owner: string, uuid: string): Promise<HookRow | undefined> {
  const rows = await sql.unsafe(`SELECT ${HOOK_COLUMNS} FROM hooks WHERE owner = $1 AND uuid = $2`, [owner, uuid]);
  return rows[0] ? hookRow(rows[0]) : undefined;
}

/** Pauses or resumes (an expired hook stays expired); undefined: no such hook of this owner. */
export async function setHookPaused(sql: Sql, owner: string, uuid: string, paused: boolean): Promise<HookRow | undefined> {
  const rows = await sql.unsafe(
    `UPDATE hooks SET status = CASE WHEN status = 'expired' THEN status WHEN $3 THEN 'paused' ELSE 'active' END, updated_at = now()
     WHERE owner = $1 AND uuid = $2 RETURNING ${HOOK_COLUMNS}`,
    [owner, uuid, paused],
  );
  return rows[0] ? hookRow(rows[0]) : undefined;
}

/** The API key name that owns the hook (undefined: no such hook), for the push room hook:<uuid>. */
export async function hookOwner(sql: Sql, uuid: string): Promise<string | undefined> {
  const [r] = await sql<{ owner: string }[]>`SELECT owner FROM hooks WHERE uuid = ${uuid.toLowerCase()}`;
  return r?.owner;
}

export async function deleteHook(sql: Sql, owner: string, uuid: string): Promise<boolean> {
  const rows = await sql`DELETE FROM hooks WHERE owner = ${owner} AND uuid = ${uuid} RETURNING id`;
  return rows.length > 0;
}

export interface DeliveryRow {
  id: number;
  action: string;
  block_height: number;
  index_block_hash: string;
  status: string;
  attempts: number;
  created_at: Date;
  delivered_at: Date | null;
  next_attempt_at: Date;
  tries: { attempt: number; at: Date; status_code: number | null; error: string | null; ms: number }[];
}

export async function hookDeliveries(sql: Sql, hookId: number, limit: number, offset: number): Promise<{ total: number; rows: DeliveryRow[] }> {
  const rows = await sql<Record<string, unknown>[]>`
    SELECT d.id, d.action, d.block_height, d.index_block_hash, d.status, d.attempts, d.created_at, d.delivered_at, d.next_attempt_at,
      COALESCE((SELECT json_agg(json_build_object('attempt', a.attempt, 'at', a.at, 'status_code', a.status_code, 'error', a.error, 'ms', a.ms) ORDER BY a.attempt)
                FROM hook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS tries
    FROM hook_deliveries d WHERE d.hook_id = ${hookId}
    ORDER BY d.id DESC LIMIT ${limit} OFFSET ${offset}`;
  const [t] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM hook_deliveries WHERE hook_id = ${hookId}`;
  return {
    total: Number(t.n),
    rows: rows.map((r) => ({ ...(r as unknown as DeliveryRow), id: Number(r.id), block_height: Number(r.block_height) })),
  };
}
