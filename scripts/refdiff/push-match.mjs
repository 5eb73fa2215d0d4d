#!/usr/bin/env node
// Recall and precision of our Socket.IO push against a reference recording, per room family.
//
// usage: node push-match.mjs <reference.socketio.json> <ours.json> [--spec] [--rooms address-] [--show N]
//   <reference.socketio.json>: what record-push.mjs wrote ({subscriptions, messages: [{seq, after_event_line, event, args}]})
//   <ours.json>: what test/push/push-golden.test.ts writes with PUSH_DUMP_DIR set ({received: [{event, args, line}], want})
//   --spec      first drop from the reference what SPEC.md says we do not repeat (test/helpers/push-compare.ts
//               pushSpecDecisions rule 2: a state room's payload equal to its last one, an item room's item already
//               sent; a just-mined tx re-sent to `mempool`)
//   --rooms P   only rooms whose name starts with P
//   --show N    print up to N unmatched messages per side (room, line, a short payload summary)
//
// Per room (= event name) both streams are compared as ordered sequences: matched = the length of their longest
// common subsequence (payloads equal after removing volatile values and our trailing cursor argument). recall =
// matched / reference messages, precision = matched / our messages, summed per family (the room name before ':').
// Our `reorg` events are not in the reference's protocol and are left out.
import { readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const flag = (n) => {
  const i = argv.indexOf(n);
  if (i < 0) return false;
  argv.splice(i, 1);
  return true;
};
const opt = (n, d) => {
  const i = argv.indexOf(n);
  if (i < 0) return d;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const spec = flag('--spec');
const prefix = opt('--rooms', '');
const show = Number(opt('--show', '0'));
const [refFile, oursFile] = argv;
if (!refFile || !oursFile) {
  console.error('usage: push-match.mjs <reference.socketio.json> <ours.json> [--spec] [--rooms PREFIX] [--show N]');
  process.exit(2);
}

/** volatile values: server version, receipt times, the block time of a tx first seen in a microblock */
function strip(x) {
  if (Array.isArray(x)) return x.map(strip);
  if (x && typeof x === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(x)) {
      if (k === 'server_version' || k === 'receipt_time' || k === 'receipt_time_iso') continue;
      if ((k === 'block_time' || k === 'block_time_iso') && typeof x.microblock_hash === 'string' && x.microblock_hash !== '0x') continue;
      if ((k === 'block_time' || k === 'block_time_iso') && x.is_unanchored === true) continue;
      out[k] = strip(v);
    }
    return out;
  }
  return x;
}

function withoutCursor(args) {
  const last = args.at(-1);
  return last && typeof last === 'object' && !Array.isArray(last) && 'cursor' in last ? args.slice(0, -1) : args;
}

const ref = JSON.parse(readFileSync(refFile, 'utf8'));
const ours = JSON.parse(readFileSync(oursFile, 'utf8'));

let refMsgs = ref.messages.map((m) => ({ event: m.event, args: strip(m.args), line: m.after_event_line }));
if (spec) {
  const last = new Map();
  const sent = new Map();
  const mempoolSeen = new Set();
  refMsgs = refMsgs.filter((m) => {
    if (m.event === 'mempool') {
      const id = m.args[0]?.tx_id;
      if (mempoolSeen.has(id) || m.args[0]?.tx_status !== 'pending') return false;
      mempoolSeen.add(id);
    }
    const key = canon(m.args);
    if (m.event.startsWith('transaction:') || m.event.startsWith('address-stx-balance:')) {
      if (last.get(m.event) === key) return false;
      last.set(m.event, key);
      return true;
    }
    const seen = sent.get(m.event) ?? new Set();
    if (seen.has(key)) return false;
    seen.add(key);
    sent.set(m.event, seen);
    return true;
  });
}
const ourMsgs = ours.received
  .filter((m) => m.event !== 'reorg')
  .map((m) => ({ event: m.event, args: strip(withoutCursor(m.args)), line: m.line }));

const byRoom = (msgs) => {
  const out = new Map();
  for (const m of msgs) {
    if (!m.event.startsWith(prefix)) continue;
    const list = out.get(m.event) ?? [];
    list.push(m);
    out.set(m.event, list);
  }
  return out;
};
const a = byRoom(refMsgs);
const b = byRoom(ourMsgs);

/** JSON with object keys sorted (key order is not part of a payload) */
function canon(x) {
  if (Array.isArray(x)) return '[' + x.map(canon).join(',') + ']';
  if (x && typeof x === 'object') return '{' + Object.keys(x).sort().map((k) => JSON.stringify(k) + ':' + canon(x[k])).join(',') + '}';
  return JSON.stringify(x) ?? 'null';
}

/** longest common subsequence of two message lists; returns the matched index sets */
function lcs(x, y) {
  const n = x.length;
  const m = y.length;
  const keysX = x.map((v) => canon(v.args));
  const keysY = y.map((v) => canon(v.args));
  const dp = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      dp[i][j] = keysX[i] === keysY[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  const mx = new Set();
  const my = new Set();
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (keysX[i] === keysY[j] && dp[i][j] === dp[i + 1][j + 1] + 1) {
      mx.add(i++);
      my.add(j++);
    } else if (dp[i + 1][j] >= dp[i][j + 1]) i++;
    else j++;
  }
  return { mx, my };
}

const family = (room) => (room.includes(':') ? room.slice(0, room.indexOf(':')) : room);
const totals = new Map();
const missing = [];
const extra = [];
for (const room of new Set([...a.keys(), ...b.keys()])) {
  const x = a.get(room) ?? [];
  const y = b.get(room) ?? [];
  const { mx, my } = lcs(x, y);
  const t = totals.get(family(room)) ?? { ref: 0, ours: 0, matched: 0 };
  t.ref += x.length;
  t.ours += y.length;
  t.matched += mx.size;
  totals.set(family(room), t);
  x.forEach((m, i) => mx.has(i) || missing.push(m));
  y.forEach((m, i) => my.has(i) || extra.push(m));
}

const pct = (n, d) => (d ? ((100 * n) / d).toFixed(1) + '%' : '-');
const rows = [...totals.entries()].sort((p, q) => (p[0] < q[0] ? -1 : 1));
const all = { ref: 0, ours: 0, matched: 0 };
console.log(`${'family'.padEnd(24)} ${'reference'.padStart(9)} ${'ours'.padStart(6)} ${'matched'.padStart(7)} ${'recall'.padStart(7)} ${'precision'.padStart(9)}`);
for (const [f, t] of rows) {
  all.ref += t.ref;
  all.ours += t.ours;
  all.matched += t.matched;
  console.log(`${f.padEnd(24)} ${String(t.ref).padStart(9)} ${String(t.ours).padStart(6)} ${String(t.matched).padStart(7)} ${pct(t.matched, t.ref).padStart(7)} ${pct(t.matched, t.ours).padStart(9)}`);
}
console.log(`${'all'.padEnd(24)} ${String(all.ref).padStart(9)} ${String(all.ours).padStart(6)} ${String(all.matched).padStart(7)} ${pct(all.matched, all.ref).padStart(7)} ${pct(all.matched, all.ours).padStart(9)}`);

const summary = (m) => {
  const p = m.args.find((v) => v && typeof v === 'object' && !Array.isArray(v));
  const tx = p?.tx ?? p;
  const what = tx?.tx_id ? `tx ${tx.tx_id.slice(0, 12)} h${tx.block_height} canonical=${tx.canonical}` : p?.balance !== undefined ? `balance ${p.balance}` : '';
  return `${m.event.slice(0, 40)} line ${m.line} ${what}`;
};
if (show) {
  console.log(`\nreference only (${missing.length}):`);
  for (const m of missing.slice(0, show)) console.log('  ' + summary(m));
  console.log(`ours only (${extra.length}):`);
  for (const m of extra.slice(0, show)) console.log('  ' + summary(m));
}
