/**
 * Hooks benchmark (npm run bench:hooks): a generated chain imported into a throw-away database, then
 *   - evaluation: ms per block to match a block against 10,000 registered hooks (the indexed evaluator);
 *   - history: blocks/s of a backfill from the stored tables (one hook from start_block 0).
 *   node dist/load/hooks.js [--blocks N] [--txs-per-block M] [--hooks H]
 */
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
import { ChainGenerator } from './generate.js';
import { createBenchDatabase } from './bench-support.js';

const { values } = parseArgs({
  options: { blocks: { type: 'string', default: '2000' }, 'txs-per-block': { type: 'string', default: '10' }, hooks: { type: 'string', default: '10000' } },
});
const blocks = Number(values.blocks);
const txsPerBlock = Number(values['txs-per-block']);
const hookCount = Number(values.hooks);
const log = createLogger('warn');

const bench = await createBenchDatabase(undefined, 'sp_bench_hooks');
const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-bench-hooks-'));
const db = await connectDatabase({ databaseUrl: bench.url, dataDir: dir, max: 4 });
try {
  await migrate(db.sql);
  const gen = new ChainGenerator({ blocks, txsPerBlock, seed: 'bench-hooks', mempool: false });
  const lines: string[] = [];
  let i = 0;
  for await (const m of gen.messages()) lines.push(`${++i}\t${new Date(1_700_000_000_000 + i * 1000).toISOString()}\t${m.path}\t${m.body}`);
  const file = path.join(dir, 'chain.tsv');
  writeFileSync(file, lines.join('\n') + '\n');
  const pipeline = new ObserverPipeline(db.sql, log);
  await importEvents(file, pipeline, log);
  await pipeline.close(60_000);

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
  for (let from = 1; from <= tip; from += 500) {
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

  console.log(`chain: ${tip} blocks, ${txsPerBlock} user txs per block`);
  console.log(`evaluation, ${hookCount} hooks: p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${q(1)} ms per block (${matched} hook-block matches)`);
  console.log(`history: ${seen} blocks in ${seconds.toFixed(2)} s = ${Math.round(seen / seconds)} blocks/s (${n} deliveries written)`);
} finally {
  await db.close();
  await bench.drop();
  rmSync(dir, { recursive: true, force: true });
}
