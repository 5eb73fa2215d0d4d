/**
 * Observer fuzz: 1,000 messages taken from every fixture and broken in one way each (seeded): a required field
 * removed, a field of the wrong type, truncated JSON, malformed hex, hex that does not decode. Each must be answered
 * 400 with a JSON error, recorded as a dead letter with the same reason, and change nothing else in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.js';
import { fixtureNames, readFixture, type FixtureLine } from '../helpers/fixtures.js';
import { dumpDatabase } from '../helpers/dump.js';
import { hex, int, pick, seededRandom, type Rng } from '../helpers/fuzz.js';

const MESSAGES = 1_000;
const SEED = 0x0b5e_4e12;

/** Fields each message kind cannot do without (the node always sends them; ingest needs them). */
const REQUIRED: Record<string, string[]> = {
  '/new_block': ['block_hash', 'index_block_hash', 'parent_index_block_hash', 'block_height', 'burn_block_hash', 'burn_block_height', 'transactions', 'events'],
  '/new_burn_block': ['burn_block_hash', 'burn_block_height', 'reward_recipients'],
  '/new_microblocks': ['parent_index_block_hash', 'transactions', 'events'],
  '/drop_mempool_tx': ['dropped_txids', 'reason'],
};
/** Validated hex fields (top level and inside transactions[]). */
const HEX_KEYS = new Set(['block_hash', 'index_block_hash', 'parent_index_block_hash', 'burn_block_hash', 'parent_block_hash', 'txid', 'raw_tx']);
/** Validated integer fields. */
const INT_KEYS = new Set(['block_height', 'burn_block_height', 'burn_block_time', 'tx_index', 'event_index']);

type Json = unknown;
type Mutation = 'remove' | 'type' | 'truncate' | 'hex' | 'undecodable' | 'array';

interface Mutated {
  path: string;
  body: string;
  mutation: Mutation;
  what: string;
}

/** Every [container, key] under `root` whose key is in `keys` (objects inside arrays included). */
function slots(root: Json, keys: Set<string>, out: [Record<string, Json>, string][] = []): [Record<string, Json>, string][] {
  if (Array.isArray(root)) root.forEach((x) => slots(x, keys, out));
  else if (root && typeof root === 'object') {
    for (const [k, v] of Object.entries(root)) {
      if (keys.has(k)) out.push([root as Record<string, Json>, k]);
      if (v && typeof v === 'object' && (k === 'transactions' || Array.isArray(root))) slots(v, keys, out);
    }
  }
  return out;
}

function badHex(rng: Rng, good: string): string {
  const body = good.startsWith('0x') ? good.slice(2) : good;
  return pick(rng, [
    body, // prefix removed
    '0x' + body.slice(1), // odd length
    '0x' + body.slice(0, -2) + 'zz',
    '0X' + body,
    '0x' + body.replace(/[0-9a-f]/, 'g'),
    ' 0x' + body,
  ]);
}

function mutate(rng: Rng, line: FixtureLine): Mutated | undefined {
  const path = line.path;
  const mutation = pick<Mutation>(rng, ['remove', 'type', 'truncate', 'hex', 'undecodable', 'array']);
  if (mutation === 'truncate') {
    const cut = 1 + int(rng, line.body.length - 2);
    return { path, body: line.body.slice(0, cut), mutation, what: `cut at ${cut}/${line.body.length}` };
  }
  const msg = JSON.parse(line.body) as Json;
  if (path === '/new_mempool_tx') {
    const txs = msg as string[];
    if (!txs.length) return undefined;
    const i = int(rng, txs.length);
    if (mutation === 'hex') txs[i] = badHex(rng, txs[i]);
    else if (mutation === 'undecodable') txs[i] = '0x' + txs[i].slice(2, 2 + 2 * (1 + int(rng, 40))); // a prefix of the tx
    else if (mutation === 'type') (txs as unknown[])[i] = pick<unknown>(rng, [42, null, {}, [txs[i]], true]);
    else return { path, body: JSON.stringify(pick<unknown>(rng, [{}, 'x', 1, null, { txs }])), mutation: 'array', what: 'body not an array' };
    return { path, body: JSON.stringify(txs), mutation, what: `[${i}]` };
  }
  const obj = msg as Record<string, Json>;
  switch (mutation) {
    case 'remove': {
      const keys = (REQUIRED[path] ?? []).filter((k) => k in obj);
      if (!keys.length) return undefined;
      const k = pick(rng, keys);
      delete obj[k];
      return { path, body: JSON.stringify(obj), mutation, what: k };
    }
    case 'type': {
      const s = slots(obj, INT_KEYS);
      if (!s.length) return undefined;
      const [c, k] = pick(rng, s);
      c[k] = pick<Json>(rng, [String(c[k]), -1, 1.5, null, {}, [], 'abc', 1e300, true]);
      return { path, body: JSON.stringify(obj), mutation, what: `${k} = ${JSON.stringify(c[k])}` };
    }
    case 'hex': {
      const s = slots(obj, HEX_KEYS).filter(([c, k]) => typeof c[k] === 'string');
      if (!s.length) return undefined;
      const [c, k] = pick(rng, s);
      c[k] = badHex(rng, c[k] as string);
      return { path, body: JSON.stringify(obj), mutation, what: k };
    }
    case 'undecodable': {
      const s = slots(obj, new Set(['raw_tx'])).filter(([c, k]) => typeof c[k] === 'string' && (c[k] as string).length > 4);
      if (!s.length) return undefined;
      const [c, k] = pick(rng, s);
      const raw = c[k] as string;
      // valid hex that is not a transaction: truncated, or random bytes
      c[k] = rng() < 0.5 ? raw.slice(0, 2 + 2 * (1 + int(rng, (raw.length - 2) / 2 - 1))) : '0x' + hex(rng, 2 * (8 + int(rng, 60)));
      return { path, body: JSON.stringify(obj), mutation, what: k };
    }
    case 'array': {
      const keys = ['transactions', 'events', 'dropped_txids', 'reward_recipients'].filter((k) => Array.isArray(obj[k]));
      if (!keys.length) return undefined;
      const k = pick(rng, keys);
      obj[k] = pick<Json>(rng, ['x', 7, { 0: 'a' }, null, [1, 2, 3]]);
      return { path, body: JSON.stringify(obj), mutation, what: k };
    }
    default:
      return undefined;
  }
}

let svc: TestService;
const sources: FixtureLine[] = [];

beforeAll(async () => {
  // mocknet delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
  svc = await startTestService({}, { fixture: 'mocknet' });
  for (const name of fixtureNames()) sources.push(...readFixture(name));
}, 300_000);

afterAll(async () => {
  await svc?.stop();
});

describe('observer fuzz', () => {
  it(`${MESSAGES} mutated fixture messages: each a 400, recorded as a dead letter, nothing else changes`, async () => {
    const rng = seededRandom(SEED);
    const mutated: Mutated[] = [];
    while (mutated.length < MESSAGES) {
      const m = mutate(rng, pick(rng, sources));
      if (m) mutated.push(m);
    }
    await svc.service.push?.publisher?.idle(); // the base replay's publications are written
    const before = await dumpDatabase(svc.db.sql);
    const [{ n: pushBefore }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM push_messages`;

    const accepted: string[] = [];
    const badReplies: string[] = [];
    const reasons: string[] = [];
    const byMutation: Record<string, number> = {};
    for (const m of mutated) {
      byMutation[m.mutation] = (byMutation[m.mutation] ?? 0) + 1;
      const res = await fetch(svc.observer + m.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: m.body });
      const text = await res.text();
      if (res.status !== 400) {
        accepted.push(`${res.status} ${m.path} ${m.mutation} ${m.what}: ${text.slice(0, 160)}`);
        continue;
      }
      try {
        const b = JSON.parse(text) as { statusCode?: number; message?: unknown };
        if (b.statusCode !== 400 || typeof b.message !== 'string' || !b.message) throw new Error('no message');
        reasons.push(b.message);
      } catch {
        badReplies.push(`${m.path} ${m.mutation}: ${text.slice(0, 160)}`);
      }
    }
    console.log(`observer fuzz: ${MESSAGES} mutated messages ${JSON.stringify(byMutation)}, non-400 ${accepted.length}, bad 400 bodies ${badReplies.length}`);
    expect(accepted.slice(0, 10)).toEqual([]);
    expect(badReplies.slice(0, 10)).toEqual([]);

    await svc.service.push?.publisher?.idle();
    const after = await dumpDatabase(svc.db.sql);
    for (const table of Object.keys(before)) {
      if (table === 'dead_letters') continue;
      expect(after[table], table).toEqual(before[table]);
    }
    const [{ n: pushAfter }] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM push_messages`;
    expect(pushAfter).toBe(pushBefore);
    // one dead letter per rejected message, in order, with the body as received and the reason the node was told
    const letters = after.dead_letters.slice(before.dead_letters.length) as { path: string; reason: string; body: string }[];
    expect(letters.length).toBe(MESSAGES);
    letters.forEach((l, i) => {
      expect(l.path).toBe(mutated[i].path);
      expect(l.body).toBe(mutated[i].body);
      expect(l.reason).toBe(reasons[i]);
    });
  }, 300_000);
});
