#!/usr/bin/env node
// Usage: node scripts/refdiff/record.mjs <requests.json> <out.json> [base-url]
//
// requests.json: JSON array; each element is a GET path ("/extended/v1/tx?limit=1") or
// {"method": "POST", "path": "/rosetta/v1/block", "body": {...}} (also other methods).
// Every request goes to the reference API (default http://127.0.0.1:4999, or REF_URL / the
// 3rd argument) on a FRESH connection (agent: false: the reference destroys keep-alive
// sockets after Rosetta 500s), redirects are not followed, 4 requests at a time, 30 s timeout.
//
// out.json: the same shape as ../shared/fixtures/golden-ext/*.json, in input order:
//   {"request": <input element>, "status": N, "body": <parsed JSON, or the raw text>,
//    "content_type"?: <when the response is not application/json>, "location"?: <3xx>}
// A request that fails gets status 0 and "error": <text>.
// As in golden-ext, the build directory in the `stack` of Rosetta 5xx bodies becomes `<ref>`.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CONCURRENCY = 4;
const TIMEOUT_MS = 30_000;
const REF_APP_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'app');

const [reqFile, outFile, baseArg] = process.argv.slice(2);
if (!reqFile || !outFile) {
  console.error('usage: record.mjs <requests.json> <out.json> [base-url]');
  process.exit(2);
}
const base = new URL(baseArg ?? process.env.REF_URL ?? 'http://127.0.0.1:4999');
const requests = JSON.parse(fs.readFileSync(reqFile, 'utf8'));
if (!Array.isArray(requests)) {
  console.error(`${reqFile}: not a JSON array`);
  process.exit(2);
}

// Node's http client refuses raw spaces / non-ASCII in a path; encode them as fetch would.
const safePath = p => p.replace(/[^\x21-\x7e]/gu, c => encodeURIComponent(c));

function send(element) {
  const isStr = typeof element === 'string';
  const method = isStr ? 'GET' : (element.method ?? 'GET').toUpperCase();
  const reqPath = safePath(isStr ? element : element.path);
  const hasBody = !isStr && element.body !== undefined;
  const payload = hasBody
    ? Buffer.from(typeof element.body === 'string' ? element.body : JSON.stringify(element.body))
    : null;
  const headers = { accept: '*/*', connection: 'close' };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  return new Promise(resolve => {
    let settled = false;
    const done = v => {
      if (!settled) {
        settled = true;
        resolve(v);
      }
    };
    let req;
    try {
      req = http.request(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          method,
          path: reqPath,
          headers,
          agent: false,
          timeout: TIMEOUT_MS,
        },
        res => {
          const chunks = [];
          res.on('data', c => chunks.push(c));
          res.on('error', e => done({ status: 0, error: String(e?.message ?? e) }));
          res.on('end', () => done({ res, text: Buffer.concat(chunks).toString('utf8') }));
        }
      );
    } catch (e) {
      done({ status: 0, error: String(e?.message ?? e) });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy(new Error(`timeout after ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    req.on('timeout', () => req.destroy(new Error(`socket idle for ${TIMEOUT_MS} ms`)));
    req.on('error', e => done({ status: 0, error: String(e?.message ?? e) }));
    req.on('close', () => clearTimeout(timer));
    if (payload) req.write(payload);
    req.end();
  });
}

function scrubStack(status, body) {
  if (status >= 500 && body && typeof body === 'object' && typeof body.stack === 'string') {
    body.stack = body.stack.split(REF_APP_DIR).join('<ref>');
  }
  return body;
}

async function record(element) {
  const r = await send(element);
  if (!r.res) return { request: element, status: 0, body: null, error: r.error };
  const { res, text } = r;
  const status = res.statusCode;
  const ct = res.headers['content-type'];
  const isJsonCt = typeof ct === 'string' && /^application\/([\w.+-]*\+)?json\b/i.test(ct);
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  const out = { request: element, status, body: scrubStack(status, body) };
  if (!isJsonCt || typeof body === 'string') out.content_type = ct ?? '';
  if (status >= 300 && status < 400) out.location = res.headers['location'] ?? null;
  return out;
}

const results = new Array(requests.length);
let next = 0;
const t0 = Date.now();
async function worker() {
  while (next < requests.length) {
    const i = next++;
    results[i] = await record(requests[i]);
  }
}
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, requests.length) }, worker));
fs.writeFileSync(outFile, JSON.stringify(results, null, 1) + '\n');
const failed = results.filter(r => r.status === 0).length;
console.log(
  `recorded ${results.length} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s` +
    (failed ? `, ${failed} failed (status 0)` : '') +
    ` -> ${outFile}`
);
