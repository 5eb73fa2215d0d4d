/**
 * Hooks benchmark (npm run bench:hooks): a generated chain imported into a throw-away database, then
 *   - evaluation: ms per block to match a block against 10,000 registered hooks (the indexed evaluator);
 *   - history: blocks/s of a backfill from the stored tables (one hook from start_block 0);
 *   - delivery latency: the real service on that database with `--active` registered hooks and a receiver HTTP server;
 *     `--live` more blocks are POSTed to its observer, one every `--interval-ms`; for each POST the receiver gets, the
 *     time from the observer's 200 for that block (and from the projection's COMMIT of it) to the POST's arrival.
 *   node dist/load/hooks.js [--blocks N] [--txs-per-block M] [--hooks H] [--active A] [--live L] [--interval-ms I]
 *                           [--only history]   (the history figures only: no evaluation, no live service)
 *                           [--database URL]   (the history figures on a chain already imported there, e.g. by
 *                                               `import-events` of a generated file; the bench's hooks and their
 *                                               deliveries are deleted at the end, nothing else is written)
 *                           [--in-database-only] (history: without the comparison runs evaluated in the service)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { startService } from '../src/service.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../src/logger.js';
import { connectDatabase } from '../src/store/connect.js';
import { migrate } from '../src/store/migrate.js';
import { ObserverPipeline } from '../src/observer/pipeline.js';
import { importEvents } from '../src/replay.js';
import { canonicalBlockHashes, canonicalTipHeight, insertHook, loadHookBlocks, type StoredPredicate } from '../src/store/hooks.js';
import { HookIndex, type IndexedHook } from '../src/hooks/evaluate.js';
import { HookRunner } from '../src/hooks/runner.js';
import type { HookPredicate } from '../src/hooks/predicate.js';
import { ChainGenerator } from './generator/index.js';
import { createBenchDatabase } from './bench-support.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '2000' },
    'txs-per-block': { type: 'string', default: '10' },
    hooks: { type: 'string', default: '10000' },
    active: { type: 'string', default: '1000' },
    live: { type: 'string', default: '100' },
    'interval-ms': { type: 'string', default: '500' },
    only: { type: 'string' },
    database: { type: 'string' },
    'in-database-only': { type: 'boolean', default: false },
  },
});
const activeCount = Number(values.active);
const liveBlocks = Number(values.live);
const intervalMs = Number(values['interval-ms']);
const blocks = Number(values.blocks);
const txsPerBlock = Number(values['txs-per-block']);
const hookCount = Number(values.hooks);
const log = createLogger('warn');
if (values.only !== undefined && values.only !== 'history') throw new Error('--only takes: history');
const existing = values.database;
/** the generated chain's blocks above `blocks`, sent live to the service */
const liveMessages: { path: string; body: string; height?: number }[] = [];
const historyOnly = values.only === 'history' || existing !== undefined;
const inDatabaseOnly = values['in-database-only'] === true;

const bench = existing === undefined ? await createBenchDatabase(undefined, 'sp_bench_hooks') : undefined;
const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-bench-hooks-'));
const db = await connectDatabase({ databaseUrl: existing ?? bench!.url, dataDir: dir, max: 4 });
try {
  await migrate(db.sql);
  if (existing === undefined) await importGenerated();
  else await db.sql`DELETE FROM hooks WHERE owner = 'bench'`;
  await measure();
} finally {
  if (existing !== undefined) await db.sql`DELETE FROM hooks WHERE owner = 'bench'`.catch(() => undefined);
  await db.close();
  await bench?.drop();
  rmSync(dir, { recursive: true, force: true });
}

/** The generated chain's first `blocks` blocks, imported; the rest is sent live to the service (liveMessages). */
async function importGenerated(): Promise<void> {
  // the chain is generated whole; its first `blocks` blocks are imported, the rest is sent live to the service
  const gen = new ChainGenerator({ blocks: blocks + liveBlocks, txsPerBlock, seed: 'bench-hooks', mempool: false });
  const lines: string[] = [];
  let i = 0;
  for await (const m of gen.messages()) {
    const height = m.path === '/new_block' ? (JSON.parse(m.body) as { block_height: number }).block_height : undefined;
    if (liveMessages.length || (height !== undefined && height > blocks)) liveMessages.push({ path: m.path, body: m.body, height });
    else lines.push(`${++i}\t${new Date(1_700_000_000_000 + i * 1000).toISOString()}\t${m.path}\t${m.body}`);
  }
  const file = path.join(dir, 'chain.tsv');
  writeFileSync(file, lines.join('\n') + '\n');
  const pipeline = new ObserverPipeline(db.sql, log);
  await importEvents(file, pipeline, log);
  await pipeline.close(60_000);
}

async function measure(): Promise<void> {

  // 10,000 hooks over the chain's real keys and made-up ones (most match nothing, as in a real deployment)
  const keys = await db.sql<{ c: string | null; a: string | null }[]>`
    SELECT DISTINCT contract_id AS c, asset_identifier AS a FROM events WHERE contract_id IS NOT NULL OR asset_identifier IS NOT NULL LIMIT 200`;
  const contracts = keys.map((k) => k.c).filter((c): c is string => !!c);
  const assets = keys.map((k) => k.a).filter((a): a is string => !!a);
  const hooks: IndexedHook[] = [];
  for (let h = 0; h < hookCount; h++) {
    const fake = `SP000000000000000000002Q6VF78.c${h}`;
    const contract = h % 50 === 0 && contracts.length ? contracts[h % contracts.length] : fake;
    const asset = h % 50 === 1 && assets.length ? assets[h % assets.length] : `${fake}::t`;
    const scopes: HookPredicate['if_this'][] = [
      { scope: 'contract_call', contract_identifier: contract, method: 'ping' },
      { scope: 'print_event', contract_identifier: contract, contains: 'ping' },
      { scope: 'ft_event', asset_identifier: asset, actions: ['transfer'] },
      { scope: 'nft_event', asset_identifier: asset, actions: ['mint', 'transfer'] },
      { scope: 'txid', equals: '0x' + h.toString(16).padStart(64, '0') },
    ];
    hooks.push({ id: h + 1, predicate: { if_this: scopes[h % scopes.length] } });
  }
  const index = new HookIndex(hooks);
  const tip = await canonicalTipHeight(db.sql);
  const times: number[] = [];
  let matched = 0;
  for (let from = 1; !historyOnly && from <= tip; from += 500) {
    const hashes = await canonicalBlockHashes(db.sql, from, Math.min(tip, from + 499));
    const loaded = await loadHookBlocks(db.sql, hashes);
    for (const h of hashes) {
      const t = performance.now();
      matched += index.match(loaded.get(h)!).size;
      times.push(performance.now() - t);
    }
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(3);

  // history: one hook from start_block 0 over the stored chain
  const runner = new HookRunner(db.sql, log, { maxPayloadBytes: 4 << 20, timeoutMs: 1000, allowedHosts: [], retryMinMs: 1000, retryMaxMs: 1000, concurrency: 1 });
  const row = await insertHook(db.sql, {
    uuid: '00000000-0000-4000-8000-000000000001',
    owner: 'bench',
    name: 'history',
    version: 1,
    network: 'testnet',
    predicate: { if_this: { scope: 'stx_event', actions: ['transfer'] }, start_block: 0 } as unknown as StoredPredicate,
    url: 'http://127.0.0.1:9/',
    authorization_header: null,
    secret: 'x',
  });
  const started = performance.now();
  const seen = await runner.backfill(row!);
  const seconds = (performance.now() - started) / 1000;
  const [{ n }] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM hook_deliveries`;
  const hp = { ...runner.history };
  // the same history evaluated in the service, block by block (how every history ran before it was built in the
  // database; still the way for predicates the database cannot decide): the comparison, in the same run
  const slow = new HookRunner(db.sql, log, { maxPayloadBytes: 4 << 20, timeoutMs: 1000, allowedHosts: [], retryMinMs: 1000, retryMaxMs: 1000, concurrency: 1 });
  const slowRow = await insertHook(db.sql, {
    uuid: '00000000-0000-4000-8000-0000000000ff',
    owner: 'bench',
    name: 'history-in-service',
    version: 1,
    network: 'testnet',
    predicate: { if_this: { scope: 'stx_event', actions: ['transfer'] }, start_block: 0 } as unknown as StoredPredicate,
    url: 'http://127.0.0.1:9/',
    authorization_header: null,
    secret: 'x',
  });
  const slowStarted = performance.now();
  const slowSeen = inDatabaseOnly ? 0 : await slow.backfill(slowRow!, { inDatabase: false });
  const slowSeconds = (performance.now() - slowStarted) / 1000;
  const sp = slow.history;

  // history of a sparse predicate: the prints of one contract of the chain
  const sparse = await insertHook(db.sql, {
    uuid: '00000000-0000-4000-9000-000000000001',
    owner: 'bench',
    name: 'history-sparse',
    version: 1,
    network: 'testnet',
    predicate: { if_this: { scope: 'print_event', contract_identifier: contracts[0] ?? 'SP000000000000000000002Q6VF78.none' }, start_block: 0 } as unknown as StoredPredicate,
    url: 'http://127.0.0.1:9/',
    authorization_header: null,
    secret: 'x',
  });
  const sparseStarted = performance.now();
  const sparseSeen = await runner.backfill(sparse!);
  const sparseSeconds = (performance.now() - sparseStarted) / 1000;
  const [{ n: sparseN }] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM hook_deliveries WHERE hook_id = ${sparse!.id}`;
  // history of a print_event `contains` predicate (every print of the chain's contracts has the text): in the database,
  // and in the service block by block (how it ran before the database decided `contains`)
  const containsRuns: { where: string; seen: number; seconds: number; n: number }[] = [];
  for (const [i, inDatabase] of (inDatabaseOnly ? [true] : [true, false]).entries()) {
    const r = new HookRunner(db.sql, log, { maxPayloadBytes: 4 << 20, timeoutMs: 1000, allowedHosts: [], retryMinMs: 1000, retryMaxMs: 1000, concurrency: 1 });
    const row = await insertHook(db.sql, {
      uuid: `00000000-0000-4000-a000-00000000000${i}`,
      owner: 'bench',
      name: `history-contains-${i}`,
      version: 1,
      network: 'testnet',
      predicate: { if_this: { scope: 'print_event', contract_identifier: '*', contains: '"ping"' }, start_block: 0 } as unknown as StoredPredicate,
      url: 'http://127.0.0.1:9/',
      authorization_header: null,
      secret: 'x',
    });
    const at = performance.now();
    const seen = await r.backfill(row!, { inDatabase });
    const [{ n: made }] = await db.sql<{ n: string }[]>`SELECT count(*) AS n FROM hook_deliveries WHERE hook_id = ${row!.id}`;
    containsRuns.push({ where: inDatabase ? 'in the database' : 'in the service block by block', seen, seconds: (performance.now() - at) / 1000, n: Number(made) });
  }
  console.log(existing === undefined ? `chain: ${tip} blocks, ${txsPerBlock} user txs per block` : `chain: ${tip} blocks (the database given)`);
  if (!historyOnly) console.log(`evaluation, ${hookCount} hooks: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms per block (${matched} hook-block matches)`);
  console.log(
    `history, dense (stx_event), built in the database: ${seen} blocks in ${seconds.toFixed(2)} s = ${Math.round(seen / seconds)} blocks/s ` +
      `(${n} deliveries written; statements ${hp.statement.toFixed(0)} ms)`,
  );
  if (!inDatabaseOnly) console.log(
    `history, dense (stx_event), evaluated in the service block by block: ${slowSeen} blocks in ${slowSeconds.toFixed(2)} s = ${Math.round(slowSeen / slowSeconds)} blocks/s ` +
      `(read ${sp.read.toFixed(0)} ms, match ${sp.match.toFixed(0)} ms, build ${sp.build.toFixed(0)} ms, write ${sp.write.toFixed(0)} ms)`,
  );
  console.log(`history, sparse (print_event of one contract): ${sparseSeen} blocks in ${sparseSeconds.toFixed(2)} s = ${Math.round(sparseSeen / sparseSeconds)} blocks/s (${sparseN} deliveries written)`);
  for (const c of containsRuns) {
    console.log(
      `history, print_event contains, ${c.where}: ${c.seen} blocks in ${c.seconds.toFixed(2)} s = ${Math.round(c.seen / c.seconds)} blocks/s (${c.n} deliveries written)`,
    );
  }
  if (!historyOnly) {
    // delivery latency: the real service, `activeCount` hooks, a receiver
    await db.sql`DELETE FROM hooks`;
    const ackAt = new Map<number, number>();
    const commitAt = new Map<number, number>();
    const fromAck: number[] = [];
    const fromCommit: number[] = [];
    let posts = 0;
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        posts++;
        const p = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apply: { block_identifier: { index: number } }[] };
        for (const b of p.apply) {
          const a = ackAt.get(b.block_identifier.index);
          const c = commitAt.get(b.block_identifier.index);
          if (a !== undefined) fromAck.push(at - a);
          if (c !== undefined) fromCommit.push(at - c);
        }
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    // a few hooks match nearly every block (STX transfers), most follow one contract or asset of the chain, some nothing
    for (let h = 0; h < activeCount; h++) {
      const contract = contracts.length ? contracts[h % contracts.length] : `SP000000000000000000002Q6VF78.c${h}`;
      const asset = assets.length ? assets[h % assets.length] : `SP000000000000000000002Q6VF78.c${h}::t`;
      const ifThis =
        h % 20 === 0
          ? { scope: 'stx_event', actions: ['transfer'] }
          : h % 4 === 1
            ? { scope: 'print_event', contract_identifier: contract }
            : h % 4 === 2
              ? { scope: 'ft_event', asset_identifier: asset, actions: ['transfer', 'mint'] }
              : h % 4 === 3
                ? { scope: 'nft_event', asset_identifier: asset, actions: ['mint', 'transfer'] }
                : { scope: 'contract_call', contract_identifier: `SP000000000000000000002Q6VF78.c${h}`, method: 'ping' };
      await insertHook(db.sql, {
        uuid: `00000000-0000-4000-8000-${(h + 2).toString(16).padStart(12, '0')}`,
        owner: 'bench',
        name: `live-${h}`,
        version: 1,
        network: 'testnet',
        // the live chain only (no start_block would evaluate the whole history first)
        predicate: { if_this: ifThis, start_block: tip + 1 } as unknown as StoredPredicate,
        url: `${receiverUrl}/${h}`,
        authorization_header: null,
        secret: 'x',
      });
    }
    const config = loadConfig({ DATABASE_URL: bench!.url, API_HOST: '127.0.0.1', API_PORT: '0', OBSERVER_PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_ANON_RPM: '0' });
    const service = await startService(config, log);
    service.pipeline!.projector.onCommitted((m) => {
      if (m.update.kind === 'block') commitAt.set(m.update.block.block_height, performance.now());
    });
    // the hooks are settled (no history: they follow the live chain) before the first live block
    while ((await db.sql`SELECT 1 FROM hooks WHERE from_seq IS NULL LIMIT 1`).length) await new Promise((r) => setTimeout(r, 100));
    const observer = `http://127.0.0.1:${service.observerPort}`;
    const liveStarted = performance.now();
    for (const m of liveMessages) {
      const sent = performance.now();
      const res = await fetch(observer + m.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.body });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`observer answered ${res.status} to ${m.path}`);
      if (m.height !== undefined) {
        ackAt.set(m.height, performance.now());
        const wait = intervalMs - (performance.now() - sent);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    }
    // every delivery made
    const deadline = Date.now() + 300_000;
    while ((await db.sql`SELECT 1 FROM hook_chain LIMIT 1`).length || (await db.sql`SELECT 1 FROM hook_deliveries WHERE status = 'pending' LIMIT 1`).length) {
      if (Date.now() > deadline) throw new Error('deliveries still pending after 5 minutes');
      await new Promise((r) => setTimeout(r, 100));
    }
    const liveSeconds = (performance.now() - liveStarted) / 1000;
    await service.close();
    receiver.closeAllConnections();
    await new Promise((r) => receiver.close(r));
    const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))].toFixed(1) : 'n/a');

    console.log(
      `delivery, ${activeCount} active hooks, ${liveBlocks} live blocks (one per ${intervalMs} ms, ${liveSeconds.toFixed(0)} s): ${posts} POSTs; ` +
        `observer 200 → POST received p50 ${pct(fromAck, 0.5)} ms, p99 ${pct(fromAck, 0.99)} ms; ` +
        `projection COMMIT → POST received p50 ${pct(fromCommit, 0.5)} ms, p99 ${pct(fromCommit, 0.99)} ms`,
    );
  }
}

