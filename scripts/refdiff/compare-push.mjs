#!/usr/bin/env node
// Compares a push recording with another one (e.g. the golden mocknet files with a fresh recording).
// usage: node compare-push.mjs <want-prefix> <got-prefix>
//   reads <prefix>.socketio.json, <prefix>.wsrpc.json, <prefix>.replay.json of both.
// Strict: whole documents equal except volatile values. Volatile (wall clock): receipt_time / receipt_time_iso
// anywhere (mempool txs), block_time / block_time_iso of a tx object with a microblock_hash other than '0x' (a tx
// first seen in a microblock: the reference stamps it with the receipt time and keeps that time after the anchor
// block confirms it; same rule as test/helpers/push-compare.ts stripPushVolatile). Everything else, including seq, after_event_line,
// event names, argument order and key sets, must be equal.
import { readFileSync, existsSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

const [wantPrefix, gotPrefix] = process.argv.slice(2);
if (!wantPrefix || !gotPrefix) {
  console.error('usage: compare-push.mjs <want-prefix> <got-prefix>');
  process.exit(2);
}

const volatileHits = new Map();
function strip(x, where = '') {
  if (Array.isArray(x)) return x.map((v, i) => strip(v, where));
  if (x && typeof x === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(x)) {
      if (k === 'receipt_time' || k === 'receipt_time_iso') {
        out[k] = '<volatile>';
        volatileHits.set(k, (volatileHits.get(k) ?? 0) + 1);
        continue;
      }
      if ((k === 'block_time' || k === 'block_time_iso') && typeof x.microblock_hash === 'string' && x.microblock_hash !== '0x') {
        out[k] = '<volatile>';
        volatileHits.set('microblock-tx ' + k, (volatileHits.get('microblock-tx ' + k) ?? 0) + 1);
        continue;
      }
      out[k] = strip(v, where);
    }
    return out;
  }
  return x;
}

function firstDiff(a, b, p = '$') {
  if (isDeepStrictEqual(a, b)) return null;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || a === null || b === null || typeof a !== 'object')
    return `${p}: want ${JSON.stringify(a)?.slice(0, 200)} got ${JSON.stringify(b)?.slice(0, 200)}`;
  if (Array.isArray(a)) {
    if (a.length !== b.length) {
      for (let i = 0; i < Math.min(a.length, b.length); i++) {
        const d = firstDiff(a[i], b[i], `${p}[${i}]`);
        if (d) return d + ` (lengths ${a.length} vs ${b.length})`;
      }
      return `${p}: length want ${a.length} got ${b.length}`;
    }
    for (let i = 0; i < a.length; i++) {
      const d = firstDiff(a[i], b[i], `${p}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (!(k in a)) return `${p}.${k}: unexpected key (got ${JSON.stringify(b[k])?.slice(0, 120)})`;
    if (!(k in b)) return `${p}.${k}: missing key (want ${JSON.stringify(a[k])?.slice(0, 120)})`;
    const d = firstDiff(a[k], b[k], `${p}.${k}`);
    if (d) return d;
  }
  return null;
}

let failures = 0;
for (const kind of ['socketio', 'wsrpc', 'replay']) {
  const wf = `${wantPrefix}.${kind}.json`;
  const gf = `${gotPrefix}.${kind}.json`;
  if (!existsSync(wf) || !existsSync(gf)) {
    console.log(`${kind}: skipped (${!existsSync(wf) ? wf : gf} missing)`);
    continue;
  }
  const wantRaw = JSON.parse(readFileSync(wf, 'utf8'));
  const gotRaw = JSON.parse(readFileSync(gf, 'utf8'));
  const rawEqual = isDeepStrictEqual(wantRaw, gotRaw);
  volatileHits.clear();
  const want = strip(wantRaw);
  const wantHits = new Map(volatileHits);
  volatileHits.clear();
  const got = strip(gotRaw);
  const d = firstDiff(want, got);
  let count = '';
  if (kind === 'socketio') count = `${want.messages.length} vs ${got.messages.length} messages`;
  if (kind === 'wsrpc') count = `notifications per connection ${JSON.stringify(want.connections.map((c) => c.notifications.length))} vs ${JSON.stringify(got.connections.map((c) => c.notifications.length))}`;
  if (kind === 'replay') count = `${want.results.length} vs ${got.results.length} lines`;
  if (d) failures++;
  console.log(
    `${kind}: ${rawEqual ? 'IDENTICAL (byte-for-byte values)' : d ? 'DIFFERENT' : 'EQUAL apart from volatile values'}; ${count}` +
      (wantHits.size ? `; volatile values masked: ${JSON.stringify(Object.fromEntries(wantHits))}` : '') +
      (d ? `\n  first difference: ${d}` : '')
  );
}
process.exit(failures ? 1 : 0);
