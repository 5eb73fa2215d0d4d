// Builds request lists for a new event stream from the request lists of the recorded scenarios: each entity in a
// recorded request (principal, tx id, block/burn/microblock hash, asset id, name, burn height) is classified by looking
// it up in that scenario's database (our schema), replaced by a placeholder of its kind, and the placeholders are
// filled with entities of the target stream's database.
// usage: node gen-requests.mjs <target-db> <network mainnet|testnet> <out-prefix>
import postgres from 'postgres';
import { readFileSync, writeFileSync } from 'node:fs';

// The recorded scenarios' databases (each stream of ../shared/fixtures/events imported with `stacks-pulse
// import-events` into its own database): scenario name → database name, as JSON in REFDIFF_SOURCES.
const SCENARIOS = [
  'epoch-3-transition',
  'fuzzed-transactions-1',
  'mainnet-out-of-order-microblock',
  'mainnet-reorg-scenario2',
  'mocknet',
  'regtest-env-pox-4-stack-stx-in-reward-phase-S1',
];
const SRC = process.env.REFDIFF_SOURCES
  ? JSON.parse(process.env.REFDIFF_SOURCES)
  : Object.fromEntries(SCENARIOS.map((n) => [n, 'src_' + n.replace(/[^A-Za-z0-9]/g, '_').toLowerCase().slice(0, 50)]));
const [targetDb, network, outPrefix] = process.argv.slice(2);
if (!targetDb || !['mainnet', 'testnet'].includes(network) || !outPrefix) {
  console.error('usage: node gen-requests.mjs <target-db> <mainnet|testnet> <out-prefix>');
  process.exit(2);
}
const db = (name) => postgres({ host: '127.0.0.1', port: 5432, user: 'postgres', database: name, max: 1, onnotice: () => {} });

const BOOT = /^(SP000000000000000000002Q6VF78|ST000000000000000000002AMW42H)/;
const TOKEN = /0x[0-9a-fA-F]{66}(?![0-9a-fA-F])|0x[0-9a-fA-F]{64}(?![0-9a-fA-F])|(?<![0-9a-zA-Z])[0-9a-fA-F]{64}(?![0-9a-fA-F])|S[PMTN][0-9A-Z]{37,41}(?:\.[A-Za-z0-9_-]+(?:::[A-Za-z0-9_.-]+)?)?|(?<=[/=])[a-z0-9_-]+\.(?:btc|id|app|stx)(?![A-Za-z0-9])|(?<=(?:burn-blocks\/|burn_block_height=|burn_block_height%22%3A|"burn_block_height":))\d{3,}/g;

async function classifier(sql) {
  const set = async (q) => new Set((await q).map((r) => Object.values(r)[0]));
  const txIds = await set(sql`SELECT tx_id FROM txs`);
  const mempool = await set(sql`SELECT tx_id FROM mempool_txs`);
  const blockHash = await set(sql`SELECT block_hash FROM blocks`);
  const indexHash = await set(sql`SELECT index_block_hash FROM blocks`);
  const burnHash = await set(sql`SELECT burn_block_hash FROM burn_blocks UNION SELECT burn_block_hash FROM blocks`);
  const microHash = await set(sql`SELECT microblock_hash FROM microblocks`);
  const signer = await set(sql`SELECT DISTINCT signing_key FROM pox_sets`);
  const names = await set(sql`SELECT name FROM bns_names`);
  const burnHeights = await set(sql`SELECT burn_block_height::text FROM burn_blocks UNION SELECT burn_block_height::text FROM blocks`);
  const principals = await set(sql`
    SELECT sender_address FROM txs UNION SELECT token_transfer_recipient FROM txs WHERE token_transfer_recipient IS NOT NULL
    UNION SELECT sender FROM events WHERE sender IS NOT NULL UNION SELECT recipient FROM events WHERE recipient IS NOT NULL
    UNION SELECT locked_address FROM events WHERE locked_address IS NOT NULL
    UNION SELECT contract_call_contract_id FROM txs WHERE contract_call_contract_id IS NOT NULL
    UNION SELECT smart_contract_contract_id FROM txs WHERE smart_contract_contract_id IS NOT NULL
    UNION SELECT sender_address FROM mempool_txs UNION SELECT contract_id FROM events WHERE contract_id IS NOT NULL`);
  const ftIds = await set(sql`SELECT DISTINCT asset_identifier FROM events WHERE event_type = 'fungible_token_asset' AND asset_identifier IS NOT NULL`);
  const nftIds = await set(sql`SELECT DISTINCT asset_identifier FROM events WHERE event_type = 'non_fungible_token_asset' AND asset_identifier IS NOT NULL`);
  return (tok) => {
    const low = tok.toLowerCase();
    if (/^0x[0-9a-f]{66}$/i.test(tok)) return signer.has(low) ? 'signer' : null;
    if (/^(0x)?[0-9a-f]{64}$/i.test(tok)) {
      const h = low.startsWith('0x') ? low : '0x' + low;
      if (txIds.has(h)) return 'tx';
      if (mempool.has(h)) return 'mempool';
      if (indexHash.has(h)) return 'index';
      if (blockHash.has(h)) return 'block';
      if (microHash.has(h)) return 'micro';
      if (burnHash.has(h)) return 'burn';
      return null;
    }
    if (/^\d+$/.test(tok)) return burnHeights.has(tok) ? 'burnheight' : null;
    if (/^S[PMTN]/.test(tok)) {
      if (BOOT.test(tok)) return null;
      if (tok.includes('::')) return ftIds.has(tok) ? 'ft' : nftIds.has(tok) ? 'nft' : null;
      if (!principals.has(tok)) return null;
      return tok.includes('.') ? 'contract' : 'principal';
    }
    return names.has(tok) ? 'name' : null;
  };
}

/** a token's spelling: 0x-prefixed or bare, upper or lower case */
function spell(tok, value) {
  if (/^(0x)?[0-9a-fA-F]+$/.test(tok) && value.startsWith('0x')) {
    let v = tok.startsWith('0x') ? value : value.slice(2);
    const body = tok.startsWith('0x') ? tok.slice(2) : tok;
    if (body === body.toUpperCase() && /[A-F]/.test(body)) v = tok.startsWith('0x') ? '0x' + v.slice(2).toUpperCase() : v.toUpperCase();
    return v;
  }
  return value;
}

async function pools(sql) {
  const col = async (q) => (await q).map((r) => String(Object.values(r)[0]));
  const p = {};
  p.principal = await col(sql`
    WITH a AS (
      SELECT sender_address AS p FROM txs UNION ALL SELECT token_transfer_recipient FROM txs
      UNION ALL SELECT sender FROM events UNION ALL SELECT recipient FROM events UNION ALL SELECT locked_address FROM events)
    SELECT p FROM a WHERE p IS NOT NULL AND p NOT LIKE '%.%' GROUP BY p ORDER BY count(*) DESC, p LIMIT 4`);
  const rare = await col(sql`
    WITH a AS (SELECT recipient AS p FROM events UNION ALL SELECT token_transfer_recipient FROM txs UNION ALL SELECT locked_address FROM events)
    SELECT p FROM a WHERE p IS NOT NULL AND p NOT LIKE '%.%' GROUP BY p ORDER BY count(*), p LIMIT 2`);
  for (const r of rare) if (!p.principal.includes(r)) p.principal.push(r);
  p.contract = await col(sql`
    WITH a AS (SELECT smart_contract_contract_id AS p FROM txs UNION ALL SELECT contract_call_contract_id FROM txs UNION ALL SELECT contract_id FROM events)
    SELECT p FROM a WHERE p IS NOT NULL AND p NOT LIKE 'SP000000000000000000002Q6VF78%' AND p NOT LIKE 'ST000000000000000000002AMW42H%'
    GROUP BY p ORDER BY count(*) DESC, p LIMIT 4`);
  p.tx = await col(sql`
    (SELECT DISTINCT ON (tx_type) tx_id FROM txs WHERE canonical AND microblock_canonical ORDER BY tx_type, block_height DESC, tx_index)
    UNION ALL (SELECT tx_id FROM txs WHERE NOT canonical OR NOT microblock_canonical ORDER BY block_height DESC LIMIT 1)
    UNION ALL (SELECT tx_id FROM txs WHERE microblock_hash <> '' AND canonical ORDER BY block_height DESC LIMIT 1)`);
  p.mempool = await col(sql`SELECT tx_id FROM mempool_txs ORDER BY pruned, tx_id LIMIT 3`);
  const blocks = sql`
    (SELECT * FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1)
    UNION ALL (SELECT * FROM blocks WHERE canonical AND block_height = 1)
    UNION ALL (SELECT * FROM blocks WHERE canonical ORDER BY abs(block_height - (SELECT max(block_height) / 2 FROM blocks)) LIMIT 1)
    UNION ALL (SELECT * FROM blocks WHERE NOT canonical LIMIT 1)`;
  const bl = await blocks;
  p.block = [...new Set(bl.map((b) => b.block_hash))];
  p.index = [...new Set(bl.map((b) => b.index_block_hash))];
  p.burn = await col(sql`
    (SELECT burn_block_hash FROM burn_blocks WHERE canonical ORDER BY burn_block_height DESC LIMIT 1)
    UNION ALL (SELECT burn_block_hash FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1 OFFSET 2)
    UNION ALL (SELECT burn_block_hash FROM burn_blocks WHERE canonical ORDER BY burn_block_height LIMIT 1)`);
  p.burnheight = await col(sql`
    (SELECT burn_block_height FROM burn_blocks WHERE canonical ORDER BY burn_block_height DESC LIMIT 1)
    UNION ALL (SELECT burn_block_height FROM blocks WHERE canonical ORDER BY block_height DESC LIMIT 1 OFFSET 2)
    UNION ALL (SELECT burn_block_height FROM burn_blocks WHERE canonical ORDER BY burn_block_height LIMIT 1)`);
  p.micro = await col(sql`SELECT microblock_hash FROM microblocks ORDER BY microblock_canonical DESC, block_height DESC LIMIT 3`);
  p.signer = await col(sql`SELECT signing_key FROM pox_sets GROUP BY signing_key ORDER BY max(cycle_number) DESC, signing_key LIMIT 2`);
  p.name = await col(sql`SELECT name FROM bns_names GROUP BY name ORDER BY name LIMIT 3`);
  p.ft = await col(sql`SELECT asset_identifier FROM events WHERE event_type = 'fungible_token_asset' GROUP BY 1 ORDER BY count(*) DESC LIMIT 3`);
  p.nft = await col(sql`SELECT asset_identifier FROM events WHERE event_type = 'non_fungible_token_asset' GROUP BY 1 ORDER BY count(*) DESC LIMIT 3`);
  for (const k of Object.keys(p)) p[k] = [...new Set(p[k].filter(Boolean))];
  return p;
}

const isMainnetScenario = (n) => n.startsWith('mainnet-');
const targets = await pools(db(targetDb));
const out = { ext: new Map(), golden: new Map() };
for (const [scenario, dbName] of Object.entries(SRC)) {
  if ((network === 'mainnet') !== isMainnetScenario(scenario)) continue;
  const sql = db(dbName);
  const kindOf = await classifier(sql);
  await sql.end();
  for (const which of ['ext', 'golden']) {
    const file = `${process.env.STACKS_FIXTURES_DIR ?? '../shared/fixtures'}/${which === 'ext' ? 'golden-ext' : 'golden'}/${scenario}.json`;
    for (const e of JSON.parse(readFileSync(file, 'utf8'))) {
      const req = e.request;
      const text = typeof req === 'string' ? req : JSON.stringify(req);
      const slots = [];
      const template = text.replace(TOKEN, (tok) => {
        const k = kindOf(tok);
        if (!k) return tok;
        slots.push({ tok, k });
        return `\u0000${slots.length - 1}\u0000`;
      });
      if (slots.some((s) => !targets[s.k]?.length)) continue;
      // distinct source entities of one kind stay distinct: the j-th distinct one of a kind starts at offset j
      const firstIndex = new Map();
      for (const s of slots) {
        const key = s.k + ':' + s.tok.toLowerCase().replace(/^0x/, '');
        if (!firstIndex.has(key)) firstIndex.set(key, [...firstIndex.keys()].filter((x) => x.startsWith(s.k + ':')).length);
        s.j = firstIndex.get(key);
      }
      const n = slots.length ? Math.min(3, Math.max(...slots.map((s) => targets[s.k].length))) : 1;
      for (let i = 0; i < n; i++) {
        const filled = template.replace(/\u0000(\d+)\u0000/g, (_, idx) => {
          const s = slots[Number(idx)];
          const pool = targets[s.k];
          return spell(s.tok, pool[(i + s.j) % pool.length]);
        });
        const r = typeof req === 'string' ? filled : JSON.parse(filled);
        out[which].set(typeof r === 'string' ? r : JSON.stringify(r), r);
      }
    }
  }
}
for (const which of ['ext', 'golden']) {
  const list = [...out[which].values()];
  writeFileSync(`${outPrefix}.${which}.requests.json`, JSON.stringify(list, null, 0));
  console.log(which, list.length);
}
console.log(JSON.stringify(Object.fromEntries(Object.entries(targets).map(([k, v]) => [k, v.length]))));
process.exit(0);
