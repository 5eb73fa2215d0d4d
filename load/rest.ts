/**
 * REST throughput benchmark: autocannon against the hot endpoints, beside a static-response uWS
 * server (the machine's ceiling, started in the same run), with the reference's numbers for comparison.
 *
 *   npm run bench:rest -- --self                 # fresh database + service child + the epoch-3-transition fixture
 *   npm run bench:rest -- --url http://host:3999 # an already running, already loaded service
 *   node dist/load/rest.js --self --duration 5 --connections 50 --only blocks/latest,mempool
 *
 * Options: --url U (default http://127.0.0.1:3999), --self, --fixture NAME (default epoch-3-transition),
 * --duration S (10), --warmup S (1), --connections N (50), --pipelining N (1), --only a,b (substring filter),
 * --tx-ids id,id,... and --address P (otherwise picked from the data), --database-url URL (where --self creates its
 * database; default $BENCH_DATABASE_URL, $TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres),
 * --keep (keep the --self database), --out DIR (default load/results).
 * --rate R: target-rate mode, R requests/s per endpoint over all connections (autocannon overallRate) instead of as fast
 * as possible; the table then shows the achieved rate against the target. --set default|full: `full` adds every
 * parameterised REST endpoint (block by height/hash, tx by id, address, contract, mempool) — the growth comparison uses
 * it; inputs (a mid-chain block and tx, a contract, the busiest standard principal: an account, not a contract) are picked from the data, through
 * --inputs-db URL (the target's database) when given. --no-ceiling skips the static uWS ceiling run. --computed gives
 * every request of every row its own URL (an ignored `_=<n>` parameter), so nothing is answered from the answer cache.
 *
 * Compiled by the project's tsc (`npm run build`) to dist/load/rest.js; `npm run bench:rest` builds, then runs it.
 */
import autocannon from 'autocannon';
import postgres from 'postgres';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArgReader, createBenchDatabase, DEFAULT_ADMIN_URL, freePort } from './bench-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Options {
  url: string;
  self: boolean;
  fixture: string;
  duration: number;
  warmup: number;
  connections: number;
  pipelining: number;
  only: string[];
  txIds: string[];
  address: string | undefined;
  databaseUrl: string;
  keep: boolean;
  out: string;
  rate: number;
  set: 'default' | 'full';
  /** every row with its own URL per request: none answered from the answer cache (growth runs) */
  computed: boolean;
  inputsDb: string | undefined;
  ceiling: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    url: 'http://127.0.0.1:3999',
    self: false,
    fixture: 'epoch-3-transition',
    duration: 10,
    warmup: 1,
    connections: 50,
    pipelining: 1,
    only: [],
    txIds: [],
    address: undefined,
    databaseUrl: DEFAULT_ADMIN_URL,
    keep: false,
    out: path.join(ROOT, 'load/results'),
    rate: 0,
    set: 'default',
    computed: false,
    inputsDb: undefined,
    ceiling: true,
  };
  const args = new ArgReader(argv);
  for (let a = args.next(); a !== undefined; a = args.next()) {
    switch (a) {
      case '--url': o.url = args.value().replace(/\/$/, ''); break;
      case '--self': o.self = true; break;
      case '--fixture': o.fixture = args.value(); break;
      case '--duration': o.duration = args.number(); break;
      case '--warmup': o.warmup = args.number(); break;
      case '--connections': o.connections = args.number(); break;
      case '--pipelining': o.pipelining = args.number(); break;
      case '--only': o.only = args.value().split(',').filter(Boolean); break;
      case '--tx-ids': o.txIds = args.value().split(',').filter(Boolean); break;
      case '--address': o.address = args.value(); break;
      case '--database-url': o.databaseUrl = args.value(); break;
      case '--keep': o.keep = true; break;
      case '--out': o.out = path.resolve(args.value()); break;
      case '--rate': o.rate = args.number(); break;
      case '--set': {
        const v = args.value();
        if (v !== 'default' && v !== 'full') throw new Error('--set is default or full');
        o.set = v;
        break;
      }
      case '--inputs-db': o.inputsDb = args.value(); break;
      case '--no-ceiling': o.ceiling = false; break;
      case '--computed': o.computed = true; break;
      case '-h':
      case '--help':
        process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('*/')[0] + '*/\n');
        process.exit(0);
      // eslint-disable-next-line no-fallthrough
      default:
        throw new Error(`unknown option ${a} (see --help)`);
    }
  }
  return o;
}

/** Reference (Hiro Stacks Blockchain API v8.13.6) measured with the same tool and settings. */
/**
 * The reference's figures measured beside stacks-pulse on this machine class (../shared/REFERENCE-PERF-R2.md, autocannon,
 * 50 connections, epoch-3-transition), keyed by the endpoint's row name (a "computed" row compares with the same figure).
 */
const REFERENCE: Record<string, { low: number; high: number; p99?: number }> = {
  '/extended': { low: 1970, high: 1970, p99: 54 },
  '/extended/v2/blocks/latest': { low: 2424, high: 2424, p99: 48 },
  '/extended/v1/block?limit=30': { low: 573, high: 573, p99: 162 },
  '/extended/v1/tx/mempool/stats': { low: 1315, high: 1315, p99: 57 },
  '/extended/v1/tx/multiple (5 ids)': { low: 475, high: 497, p99: 174 },
  '/extended/v1/tx/events?address=…': { low: 1367, high: 1383, p99: 72 },
  '/extended/v1/address/{p}/transactions': { low: 528, high: 528, p99: 160 },
  '/extended/v1/address/{p}/balances': { low: 688, high: 688, p99: 111 },
  '/extended/v1/address/{p}/nonces': { low: 1423, high: 1423, p99: 59 },
  '/extended/v2/addresses/{p}/transactions': { low: 312, high: 312, p99: 252 },
  '/extended/v1/tx?limit=50': { low: 135, high: 135, p99: 518 },
  '/extended/v2/burn-blocks': { low: 1304, high: 1304, p99: 66 },
  '/extended/v2/pox/cycles': { low: 1937, high: 1937, p99: 52 },
  '/extended/v1/stx_supply': { low: 1531, high: 1531, p99: 55 },
};

/** The row name without its " (computed…)" suffix: the key of its reference figure. */
const refKey = (name: string) => name.replace(/ \(computed[^)]*\)$/, '');

interface Row {
  name: string;
  path: string;
  cached: boolean;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  /** 5xx answers (part of non2xx) */
  s5xx: number;
  errors: number;
  timeouts: number;
  /** --rate: the target per endpoint */
  targetRate?: number;
  bytesPerReq: number;
  ofCeiling?: number;
  /** a large cached answer: req/s divided by a static uWS server's sending the same bytes */
  ofSameSize?: number;
  reference?: { low: number; high: number; p99?: number };
  /** req/s divided by the reference's upper figure */
  vsReference?: number;
}

/** cached answers at least this large (bytes per response, headers included) are also compared with a same-size static server */
const LARGE_BODY = 8 * 1024;

function log(msg: string) {
  process.stderr.write(msg + '\n');
}


async function waitFor(url: string, ms: number, child?: ChildProcess): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`${url}: process exited with ${child.exitCode}`);
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > until) throw new Error(`${url} did not come up within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function readFixture(name: string): { path: string; body: string }[] {
  const dir = path.resolve(ROOT, process.env.STACKS_FIXTURES_DIR ?? '../shared/fixtures');
  const text = readFileSync(path.join(dir, 'events', `${name}.tsv`), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const a = l.indexOf('\t');
      const b = l.indexOf('\t', a + 1);
      const c = l.indexOf('\t', b + 1);
      return { path: l.slice(b + 1, c), body: l.slice(c + 1) };
    });
}

/** A fresh database, the service as a child process (API + observer), the fixture replayed through the observer. */
async function startSelf(o: Options): Promise<{ url: string; dbUrl: string; cleanup(): Promise<void> }> {
  const db = await createBenchDatabase(o.databaseUrl);
  const dbUrl = db.url;
  const [apiPort, observerPort] = [await freePort(), await freePort()];
  // BENCH_NODE_ARGS: extra node flags for the service child (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it)
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'dist/src/main.js'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      DATABASE_URL: dbUrl,
      API_HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      OBSERVER_HOST: '127.0.0.1',
      OBSERVER_PORT: String(observerPort),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ANON_RPM: '0', // a benchmark client is one IP
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${apiPort}`;
  const cleanup = async () => {
    await stop(child);
    if (o.keep) {
      log(`kept database ${dbUrl}`);
      return;
    }
    await db.drop();
  };
  try {
    await waitFor(url + '/extended', 60_000, child);
    const lines = readFixture(o.fixture);
    const started = Date.now();
    for (const l of lines) {
      const r = await fetch(`http://127.0.0.1:${observerPort}${l.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: l.body,
      });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`observer answered ${r.status} to ${l.path}`);
    }
    // planner statistics, as autovacuum would have them on a database that has been running for a while
    const db = postgres(dbUrl, { max: 1, onnotice: () => {} });
    await db`ANALYZE`;
    await db.end();
    log(`loaded ${o.fixture}: ${lines.length} messages in ${Date.now() - started} ms (database ${db.name})`);
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { url, dbUrl, cleanup };
}

/** The ceiling: a uWS server in its own process answering every request with the same static bytes. */
async function startCeiling(body: string): Promise<{ url: string; close(): Promise<void> }> {
  const port = await freePort();
  const script = `
    import uWS from 'uWebSockets.js';
    const body = Buffer.from(process.env.CEILING_BODY);
    uWS.App().any('/*', (res) => {
      res.cork(() => {
        res.writeStatus('200 OK').writeHeader('content-type', 'application/json; charset=utf-8').end(body);
      });
    }).listen('127.0.0.1', Number(process.env.CEILING_PORT), (s) => { if (!s) process.exit(2); });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, CEILING_BODY: body, CEILING_PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + '/', 10_000, child);
  return { url, close: () => stop(child) };
}

async function getJson(url: string): Promise<any> {
  const r = await fetch(url);
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** Five real tx ids (from the latest blocks) and the principal with the most events. */
async function pickInputs(o: Options, base: string, dbUrl: string | undefined): Promise<{ txIds: string[]; address: string }> {
  let txIds = o.txIds;
  if (txIds.length === 0) {
    const blocks = await getJson(`${base}/extended/v1/block?limit=30`);
    const all: string[] = blocks.results.flatMap((b: { txs: string[] }) => b.txs);
    if (all.length < 5) throw new Error('fewer than 5 txs in the latest 30 blocks: pass --tx-ids');
    // spread over the list: not 5 of one block
    txIds = [0, 1, 2, 3, 4].map((i) => all[Math.floor((i * (all.length - 1)) / 4)]);
  }
  let address = o.address;
  if (!address && dbUrl) {
    const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ p: string; n: number }[]>`
        SELECT p, count(*)::int AS n FROM (
          SELECT CASE event_type WHEN 'stx_lock' THEN locked_address WHEN 'smart_contract_log' THEN contract_id END AS p
          FROM events WHERE canonical AND event_type IN ('stx_lock', 'smart_contract_log')
          UNION ALL SELECT sender FROM events WHERE canonical AND sender IS NOT NULL
          UNION ALL SELECT recipient FROM events WHERE canonical AND recipient IS NOT NULL
        ) x WHERE p IS NOT NULL AND position('.' in p) = 0 GROUP BY p ORDER BY n DESC, p LIMIT 1`;
      if (row) {
        address = row.p;
        log(`busiest principal: ${row.p} (${row.n} events)`);
      }
    } finally {
      await sql.end();
    }
  }
  if (!address) {
    // no database access: the most frequent sender among those txs
    const txs = await getJson(`${base}/extended/v1/tx/multiple?${txIds.map((t) => `tx_id=${t}`).join('&')}`);
    const counts = new Map<string, number>();
    for (const v of Object.values(txs) as { found: boolean; result: { sender_address: string } }[]) {
      if (v.found) counts.set(v.result.sender_address, (counts.get(v.result.sender_address) ?? 0) + 1);
    }
    address = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
    if (!address) throw new Error('cannot pick an address: pass --address');
  }
  return { txIds, address };
}

/**
 * `--set full`: the parameterised endpoints, with inputs from the middle of the chain (not the hot tip) so that a long
 * chain is measured where its indexes have to work.
 */
async function fullSet(base: string, dbUrl: string | undefined, txIds: string[], address: string): Promise<{ name: string; path: string; cached: boolean }[]> {
  const tip = (await getJson(`${base}/extended/v2/blocks/latest`)).height as number;
  const mid = Math.max(1, Math.floor(tip / 2));
  const midBlock = await getJson(`${base}/extended/v1/block/by_height/${mid}`);
  const midTx: string = midBlock.txs[midBlock.txs.length - 1] ?? txIds[0];
  const list = [
    { name: '/extended/v2/blocks?limit=30', path: '/extended/v2/blocks?limit=30', cached: true },
    { name: '/extended/v2/blocks/{mid height}', path: `/extended/v2/blocks/${mid}`, cached: false },
    { name: '/extended/v1/block/by_height/{mid}', path: `/extended/v1/block/by_height/${mid}`, cached: false },
    { name: '/extended/v1/block/{mid hash}', path: `/extended/v1/block/${midBlock.hash}`, cached: false },
    { name: '/extended/v1/tx/{mid tx}', path: `/extended/v1/tx/${midTx}`, cached: false },
    { name: '/extended/v1/tx/mempool?limit=30', path: '/extended/v1/tx/mempool?limit=30', cached: false },
    { name: '/extended/v2/burn-blocks?limit=30', path: '/extended/v2/burn-blocks?limit=30', cached: true },
    { name: '/extended/v2/burn-blocks?limit=30&offset={mid}', path: `/extended/v2/burn-blocks?limit=30&offset=${mid}`, cached: false },
    { name: '/extended/v2/burn-blocks/{mid burn height}', path: `/extended/v2/burn-blocks/${midBlock.burn_block_height}`, cached: false },
    { name: '/extended/v2/burn-blocks/{mid burn height}/blocks', path: `/extended/v2/burn-blocks/${midBlock.burn_block_height}/blocks`, cached: false },
    { name: '/extended/v2/block-tenures/{mid tenure}/blocks', path: `/extended/v2/block-tenures/${midBlock.tenure_height}/blocks`, cached: false },
    { name: '/extended/v2/blocks/average-times', path: '/extended/v2/blocks/average-times', cached: false },
    { name: '/extended/v1/address/{busiest}/stx', path: `/extended/v1/address/${address}/stx`, cached: false },
    { name: '/extended/v1/address/{busiest}/mempool', path: `/extended/v1/address/${address}/mempool`, cached: false },
    { name: '/extended/v1/address/{busiest}/stx_inbound', path: `/extended/v1/address/${address}/stx_inbound`, cached: false },
    { name: '/extended/v1/address/{busiest}/assets', path: `/extended/v1/address/${address}/assets`, cached: false },
    { name: '/extended/v1/address/{busiest}/transactions_with_transfers', path: `/extended/v1/address/${address}/transactions_with_transfers`, cached: false },
    { name: '/extended/v3/principals/{busiest}/balances/ft', path: `/extended/v3/principals/${address}/balances/ft`, cached: false },
    { name: '/extended/v3/principals/{busiest}/balances/nft', path: `/extended/v3/principals/${address}/balances/nft`, cached: false },
    { name: '/extended/v3/principals/{busiest}/nonces', path: `/extended/v3/principals/${address}/nonces`, cached: false },
    { name: '/v1/addresses/stacks/{busiest}', path: `/v1/addresses/stacks/${address}`, cached: false },
    { name: '/extended/v1/microblock', path: '/extended/v1/microblock', cached: false },
    { name: '/extended/v2/mempool/fees', path: '/extended/v2/mempool/fees', cached: false },
    { name: '/extended/v1/tx?type=contract_call', path: '/extended/v1/tx?type=contract_call', cached: false },
    { name: '/extended/v1/address/{busiest}/balances', path: `/extended/v1/address/${address}/balances`, cached: false },
    { name: '/extended/v2/addresses/{busiest}/balances/ft', path: `/extended/v2/addresses/${address}/balances/ft`, cached: false },
    { name: '/extended/v1/tokens/nft/holdings?principal={busiest}', path: `/extended/v1/tokens/nft/holdings?principal=${address}`, cached: false },
    { name: '/extended/v1/tokens/ft/stx/holders', path: '/extended/v1/tokens/ft/stx/holders', cached: false },
    // stacking: the cycles list, the newest PoX events and burnchain rewards
    { name: '/extended/v2/pox/cycles', path: '/extended/v2/pox/cycles', cached: false },
    { name: '/extended/v1/pox4/events', path: '/extended/v1/pox4/events', cached: false },
    { name: '/extended/v1/burnchain/rewards', path: '/extended/v1/burnchain/rewards', cached: false },
    { name: '/extended/v1/tx?limit=50', path: '/extended/v1/tx?limit=50', cached: false },
    { name: '/extended/v1/tx?from_address={busiest}&type=token_transfer', path: `/extended/v1/tx?from_address=${address}&type=token_transfer`, cached: false },
    { name: '/extended/v1/search/{mid tx}', path: `/extended/v1/search/${midTx}`, cached: false },
    { name: '/extended/v1/stx_supply', path: '/extended/v1/stx_supply', cached: false },
    { name: '/extended/v1/stx_supply?height={mid}', path: `/extended/v1/stx_supply?height=${mid}`, cached: false },
  ];
  if (dbUrl) {
    const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
    try {
      // BNS (a chain generated without --bns has no names: no rows): the name last registered before the middle of the
      // chain, its namespace's names and its zonefile
      const [n] = await sql<{ name: string; ns: string }[]>`
        SELECT name, namespace_id AS ns FROM bns_names WHERE registered_at <= ${mid}
        ORDER BY registered_at DESC, name LIMIT 1`;
      if (n) {
        list.push(
          { name: '/v1/names/{mid name}', path: `/v1/names/${n.name}`, cached: false },
          { name: '/v1/names/{mid name}/zonefile', path: `/v1/names/${n.name}/zonefile`, cached: false },
          { name: '/v1/namespaces/{tld}/names?page=1', path: `/v1/namespaces/${n.ns}/names?page=1`, cached: false },
        );
      }
      // the last contract deployed before the middle of the chain
      const [c] = await sql<{ id: string }[]>`
        SELECT smart_contract_contract_id AS id FROM txs
        WHERE canonical AND tx_type = 'smart_contract' AND block_height <= ${mid}
        ORDER BY block_height DESC LIMIT 1`;
      if (c) {
        list.push(
          { name: '/extended/v1/contract/{id}', path: `/extended/v1/contract/${c.id}`, cached: false },
          { name: '/extended/v1/contract/{id}/events', path: `/extended/v1/contract/${c.id}/events?limit=20`, cached: false },
        );
        // contracts by trait: a trait of that contract's first public function (every deploy of the same source has it)
        const [abi] = await sql<{ f: { name: string; access: string; args: unknown[]; outputs: unknown } | null }[]>`
          SELECT (contract_abi::jsonb -> 'functions' -> 0) AS f FROM txs
          WHERE canonical AND smart_contract_contract_id = ${c.id} AND contract_abi IS NOT NULL LIMIT 1`;
        if (abi?.f) {
          const trait = JSON.stringify({ maps: [], functions: [abi.f], variables: [], fungible_tokens: [], non_fungible_tokens: [] });
          list.push({ name: '/extended/v1/contract/by_trait?trait_abi={mid contract fn}', path: `/extended/v1/contract/by_trait?trait_abi=${encodeURIComponent(trait)}`, cached: false });
        }
      }
      // the most held fungible token and NFT asset class: holders of a token, mints of a collection
      const [ft] = await sql<{ a: string }[]>`
        SELECT asset_identifier AS a FROM ft_balances GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`;
      if (ft) list.push({ name: '/extended/v1/tokens/ft/{busiest token}/holders', path: `/extended/v1/tokens/ft/${ft.a}/holders`, cached: false });
      const [nft] = await sql<{ a: string }[]>`
        SELECT asset_identifier AS a FROM nft_custody GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`;
      if (nft) list.push({ name: '/extended/v1/tokens/nft/mints?asset_identifier={busiest}', path: `/extended/v1/tokens/nft/mints?asset_identifier=${nft.a}`, cached: false });
    } finally {
      await sql.end();
    }
  }
  return list;
}

/**
 * `unique`: every request gets its own URL (an extra `_=<n>` parameter the API ignores), so none is served from the
 * answer cache: the row measures the real work (queries, serialisation) of the lookup.
 */
function run(url: string, o: Options, duration: number, unique = false, body?: string): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const rate = o.rate > 0 ? { overallRate: o.rate } : {};
    const post = body === undefined ? {} : { method: 'POST', body, headers: { 'content-type': 'application/json' } };
    let n = 0;
    const u = new URL(url);
    const basePath = u.pathname + u.search;
    const sep = u.search ? '&' : '?';
    const requests = unique ? { requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: `${basePath}${sep}_=${n++}` }) }] } : {};
    autocannon({ url, connections: o.connections, duration, pipelining: o.pipelining, ...rate, ...requests, ...post } as autocannon.Options, (err, result) =>
      err ? reject(err) : resolve(result),
    );
  });
}

/** `body`: a POST with this JSON body (Rosetta) instead of a GET. */
async function measure(name: string, base: string, p: string, cached: boolean, o: Options, unique = false, body?: string): Promise<Row> {
  const url = base + p;
  const probe = await fetch(url, body === undefined ? {} : { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const text = await probe.text();
  if (probe.status !== 200) throw new Error(`${p}: ${probe.status} ${text.slice(0, 200)}`);
  if (o.warmup > 0) await run(url, o, o.warmup, unique, body);
  const r = await run(url, o, o.duration, unique, body);
  return {
    name,
    path: p,
    cached,
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    s5xx: (r as unknown as { '5xx'?: number })['5xx'] ?? 0,
    errors: r.errors,
    targetRate: o.rate > 0 ? o.rate : undefined,
    timeouts: r.timeouts,
    bytesPerReq: r.requests.total ? Math.round(r.throughput.total / r.requests.total) : 0,
  };
}

function table(rows: Row[]): string {
  const head = ['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'of ceiling', 'reference req/s', 'vs reference', 'non-2xx', '5xx'];
  const body = rows.map((r) => [
    r.name,
    r.targetRate ? `${r.rps} / ${r.targetRate}` : String(r.rps),
    String(r.p50),
    String(r.p99),
    r.ofCeiling === undefined ? '' : `${Math.round(r.ofCeiling * 100)}%`,
    r.reference ? `${r.reference.low}–${r.reference.high}${r.reference.p99 ? ` (p99 ${r.reference.p99})` : ''}` : '—',
    r.vsReference === undefined ? '—' : `${r.vsReference.toFixed(1)}×`,
    String(r.non2xx + r.errors + r.timeouts),
    String(r.s5xx),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => c.padEnd(widths[i])).join(' | ') + ' |';
  return [line(head), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...body.map(line)].join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const loadBefore = os.loadavg();
  let self: Awaited<ReturnType<typeof startSelf>> | undefined;
  let ceiling: Awaited<ReturnType<typeof startCeiling>> | undefined;
  try {
    if (o.self) {
      self = await startSelf(o);
      o.url = self.url;
    } else {
      await waitFor(o.url + '/extended', 5000);
    }
    const { txIds, address } = await pickInputs(o, o.url, self?.dbUrl ?? o.inputsDb);
    const status = await (await fetch(o.url + '/extended')).text();
    const tipHeight = (JSON.parse(status) as { chain_tip?: { block_height: number } }).chain_tip?.block_height ?? 1;
    if (o.ceiling) ceiling = await startCeiling(status);

    // Rosetta (POST): the tip block with its operations, and an account balance, for the network the service serves
    const rosettaNet = ((await (await fetch(o.url + '/rosetta/v1/network/list', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as {
      network_identifiers: { blockchain: string; network: string }[];
    }).network_identifiers[0];
    const endpoints: { name: string; path: string; cached: boolean; unique?: boolean; body?: string }[] = [
      { name: 'static uWS (ceiling)', path: '/ceiling', cached: false },
      { name: '/extended', path: '/extended', cached: true },
      { name: '/extended/v2/blocks/latest', path: '/extended/v2/blocks/latest', cached: true },
      { name: '/extended/v1/block?limit=30', path: '/extended/v1/block?limit=30', cached: true },
      { name: '/extended/v1/tx/mempool/stats', path: '/extended/v1/tx/mempool/stats', cached: true },
      { name: '/extended/v1/tx/multiple (5 ids)', path: `/extended/v1/tx/multiple?${txIds.map((t) => `tx_id=${t}`).join('&')}`, cached: false },
      { name: '/extended/v1/tx/events?address=…', path: `/extended/v1/tx/events?address=${address}`, cached: false },
      // the same lookups with a new URL every request: never from the answer cache
      { name: '/extended/v1/tx/multiple (5 ids) (computed)', path: `/extended/v1/tx/multiple?${txIds.map((t) => `tx_id=${t}`).join('&')}`, cached: false, unique: true },
      { name: '/extended/v1/tx/events?address=… (computed)', path: `/extended/v1/tx/events?address=${address}`, cached: false, unique: true },
      // wallet accounts: pages from principal_txs, totals from principal_tx_counts
      { name: '/extended/v1/address/{p}/transactions', path: `/extended/v1/address/${address}/transactions`, cached: false },
      { name: '/extended/v1/address/{p}/nonces', path: `/extended/v1/address/${address}/nonces`, cached: false },
      { name: '/extended/v2/addresses/{p}/transactions', path: `/extended/v2/addresses/${address}/transactions`, cached: false },
      // the rest of the endpoints REFERENCE-PERF-R2 measured the reference on
      { name: '/extended/v1/address/{p}/balances', path: `/extended/v1/address/${address}/balances`, cached: false },
      { name: '/extended/v1/tx?limit=50', path: '/extended/v1/tx?limit=50', cached: false },
      { name: '/extended/v2/burn-blocks', path: '/extended/v2/burn-blocks', cached: false },
      { name: '/extended/v2/pox/cycles', path: '/extended/v2/pox/cycles', cached: false },
      { name: '/extended/v1/stx_supply', path: '/extended/v1/stx_supply', cached: false },
      { name: 'POST /rosetta/v1/block (tip)', path: '/rosetta/v1/block', cached: false, body: JSON.stringify({ network_identifier: rosettaNet, block_identifier: {} }) },
      {
        name: 'POST /rosetta/v1/account/balance',
        path: '/rosetta/v1/account/balance',
        cached: false,
        body: JSON.stringify({ network_identifier: rosettaNet, account_identifier: { address } }),
      },
      // a past balance (Rosetta): balance_checkpoints, one index lookup per currency, whatever the chain's length
      {
        name: 'POST /rosetta/v1/account/balance (block at half the tip height)',
        path: '/rosetta/v1/account/balance',
        cached: false,
        body: JSON.stringify({ network_identifier: rosettaNet, account_identifier: { address }, block_identifier: { index: Math.max(1, Math.floor(tipHeight / 2)) } }),
      },
      // the cursor-paginated v3 principal API
      { name: '/extended/v3/principals/{p}/transactions', path: `/extended/v3/principals/${address}/transactions`, cached: false },
      { name: '/extended/v3/principals/{p}/balances/stx', path: `/extended/v3/principals/${address}/balances/stx`, cached: false },
    ];
    if (o.set === 'full') endpoints.push(...(await fullSet(o.url, self?.dbUrl ?? o.inputsDb, txIds, address)));
    if (!o.ceiling) endpoints.shift();
    const selected = endpoints.filter((e, i) => (o.ceiling && i === 0) || o.only.length === 0 || o.only.some((s) => e.path.includes(s) || e.name.includes(s)));
    log(`target ${o.url}, ${o.connections} connections, ${o.duration} s per endpoint (+${o.warmup} s warm-up), ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    const rows: Row[] = [];
    for (const e of selected) {
      const base = e.path === '/ceiling' ? ceiling!.url : o.url;
      log(`… ${e.name}`);
      const row = await measure(e.name, base, e.path, e.cached, o, e.unique || o.computed, e.body);
      const ref = REFERENCE[refKey(e.name)];
      if (ref) {
        row.reference = ref;
        row.vsReference = row.rps / ref.high;
      }
      rows.push(row);
    }
    if (o.ceiling) {
      const ceil = rows[0].rps;
      for (const r of rows.slice(1)) r.ofCeiling = ceil ? r.rps / ceil : undefined;
      // A large answer is bound by moving its bytes (loopback, the client's parser), not by the service: the same
      // static uWS server sending exactly that answer's bytes shows what any server reaches at that size.
      for (const r of rows.slice(1)) {
        if (!r.cached || r.bytesPerReq < LARGE_BODY) continue;
        const bytes = await (await fetch(o.url + r.path)).text();
        const same = await startCeiling(bytes);
        try {
          log(`… static uWS with the ${r.name} body`);
          const row = await measure(`static uWS, same ${Math.round(Buffer.byteLength(bytes) / 1024)} KB body as ${r.name}`, same.url, '/', false, o);
          row.ofCeiling = ceil ? row.rps / ceil : undefined;
          r.ofSameSize = row.rps ? r.rps / row.rps : undefined;
          rows.push(row);
        } finally {
          await same.close();
        }
      }
    }

    const out = table(rows);
    process.stdout.write(out + '\n');
    process.stdout.write(
      '\nvs reference: req/s divided by the upper reference figure; target ≥ 5×. of ceiling: target ≥ 50% for the cached (hot) answers.\n',
    );
    for (const r of rows) {
      if (r.ofSameSize !== undefined) process.stdout.write(`${r.name}: ${Math.round(r.ofSameSize * 100)}% of a static uWS server sending the same bytes\n`);
    }
    mkdirSync(o.out, { recursive: true });
    const file = path.join(o.out, `rest-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          target: o.self ? `--self (${o.fixture})` : o.url,
          settings: { connections: o.connections, duration: o.duration, warmup: o.warmup, pipelining: o.pipelining, rate: o.rate || undefined, set: o.set },
          machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadavgBefore: loadBefore, loadavgAfter: os.loadavg(), node: process.version },
          inputs: { txIds, address },
          results: rows,
        },
        null,
        2,
      ) + '\n',
    );
    log(`written ${path.relative(process.cwd(), file)}`);
  } finally {
    await ceiling?.close();
    await self?.cleanup();
  }
}

main().catch((err) => {
  log(`bench:rest failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
