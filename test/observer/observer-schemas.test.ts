import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  EVENT_TYPES,
  OBSERVER_PATHS,
  normalizeObserverPath,
  validateObserverMessage,
  type ObserverPath,
} from '../../src/observer/schemas.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fixturesDir = resolve(repoRoot, process.env.STACKS_FIXTURES_DIR ?? '../shared/fixtures');
const eventsDir = join(fixturesDir, 'events');

interface FixtureLine {
  file: string;
  line: number;
  path: string;
  raw: string;
  body: unknown;
}

function loadFixtures(): FixtureLine[] {
  const out: FixtureLine[] = [];
  for (const file of readdirSync(eventsDir).filter((f) => f.endsWith('.tsv')).sort()) {
    const lines = readFileSync(join(eventsDir, file), 'utf8').split('\n');
    lines.forEach((text, i) => {
      if (text.trim() === '') return;
      const parts = text.split('\t');
      const raw = parts.slice(3).join('\t');
      out.push({ file, line: i + 1, path: parts[2], raw, body: JSON.parse(raw) });
    });
  }
  return out;
}

const fixtures = loadFixtures();
const clone = <T>(v: T): T => structuredClone(v);
type Obj = Record<string, any>;

function byPath(p: string): FixtureLine[] {
  return fixtures.filter((f) => f.path === p);
}

/** Asserts validation fails and the message names `fieldPath` (e.g. `body/transactions/0/raw_tx`). */
function expectFail(path: string, body: unknown, fieldPath: string, detail?: string | RegExp) {
  const r = validateObserverMessage(path, body);
  expect(r.ok, `${path} ${fieldPath} should fail`).toBe(false);
  if (r.ok) return;
  expect(r.code).toBe('invalid_body');
  // the field path must appear as a whole path segment, followed by ':'
  expect(r.message).toContain(`${fieldPath}:`);
  if (detail !== undefined) {
    const seg = r.message.split('; ').find((s) => s.startsWith(`${fieldPath}:`)) ?? '';
    if (typeof detail === 'string') expect(seg).toContain(detail);
    else expect(seg).toMatch(detail);
  }
}

function expectOk(path: string, body: unknown) {
  const r = validateObserverMessage(path, body);
  if (!r.ok) throw new Error(`${path} unexpectedly invalid: ${r.message}`);
  return r;
}

describe('fixtures', () => {
  it('cover every fixture path', () => {
    const paths = new Set(fixtures.map((f) => f.path));
    expect(fixtures.length).toBeGreaterThan(400);
    for (const p of paths) expect(OBSERVER_PATHS).toContain(p);
  });

  it('every line of every fixture validates, and parsed output keeps all data', () => {
    const failures: string[] = [];
    for (const f of fixtures) {
      const r = validateObserverMessage(f.path, f.body);
      if (!r.ok) {
        failures.push(`${f.file}:${f.line} ${f.path}: ${r.message}`);
        continue;
      }
      expect(r.path).toBe(f.path);
      // loose objects: nothing dropped, nothing altered
      expect(r.message).toEqual(JSON.parse(f.raw));
    }
    expect(failures).toEqual([]);
  });
});

describe('paths', () => {
  it('exports the eight observer paths', () => {
    expect([...OBSERVER_PATHS].sort()).toEqual(
      [
        '/attachments/new',
        '/drop_mempool_tx',
        '/new_block',
        '/new_burn_block',
        '/new_mempool_tx',
        '/new_microblocks',
        '/proposal_response',
        '/stackerdb_chunks',
      ].sort(),
    );
  });

  it('normalises trailing slashes and query strings', () => {
    expect(normalizeObserverPath('/new_block/')).toBe('/new_block');
    expect(normalizeObserverPath('/new_block//')).toBe('/new_block');
    expect(normalizeObserverPath('/new_block?x=1')).toBe('/new_block');
    expect(normalizeObserverPath('/')).toBe('/');
    const block = byPath('/new_block')[0].body;
    const r = expectOk('/new_block/', block);
    expect(r.path).toBe('/new_block');
    const r2 = expectOk('/attachments/new/', []);
    expect(r2.path).toBe('/attachments/new');
  });

  it('unknown paths are reported as such, not as invalid bodies', () => {
    const r = validateObserverMessage('/unknown_path', {});
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe('unknown_path');
      expect(r.message).toContain('/unknown_path');
    }
  });
});

describe('empty / wrong-shaped bodies', () => {
  const mustFailOnEmptyObject: ObserverPath[] = [
    '/new_block',
    '/new_burn_block',
    '/new_microblocks',
    '/drop_mempool_tx',
    '/new_mempool_tx',
    '/attachments/new',
  ];
  it.each(mustFailOnEmptyObject)('%s rejects {}', (p) => {
    const r = validateObserverMessage(p, {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(/^body(\/[a-z_]+)?: /);
  });

  it('{} names the first missing required field', () => {
    expectFail('/new_block', {}, 'body/block_hash', 'required');
    expectFail('/new_block', {}, 'body/block_height', 'required');
    expectFail('/new_burn_block', {}, 'body/burn_block_hash', 'required');
    expectFail('/new_microblocks', {}, 'body/parent_index_block_hash', 'required');
    expectFail('/drop_mempool_tx', {}, 'body/dropped_txids', 'required');
    expectFail('/new_mempool_tx', {}, 'body', 'expected array');
    expectFail('/attachments/new', {}, 'body', 'expected array');
  });

  it('permissive paths accept {} (stackerdb_chunks, proposal_response) and keep unknown keys', () => {
    expectOk('/stackerdb_chunks', {});
    expectOk('/proposal_response', {});
    const chunk = {
      contract_id: { issuer: [26, [1, 2, 3]], name: 'signers-1-0' },
      modified_slots: [{ slot_id: 1, slot_version: 2, data: '00', sig: '11' }],
    };
    expect(expectOk('/stackerdb_chunks', chunk).message).toEqual(chunk);
    const pr = { result: 'Ok', signer_signature_hash: 'aa', cost: {}, size: 1 };
    expect(expectOk('/proposal_response', pr).message).toEqual(pr);
    const att = [
      {
        attachment_index: 1,
        index_block_hash: '0x' + '11'.repeat(32),
        block_height: '5',
        content_hash: '0x' + '22'.repeat(20),
        contract_id: 'SP000000000000000000002Q6VF78.bns',
        metadata: '0x0c',
        tx_id: '0x' + '33'.repeat(32),
        content: '0x',
      },
    ];
    expect(expectOk('/attachments/new', att).message).toEqual(att);
    expectOk('/attachments/new', []);
  });

  it('permissive paths still reject the wrong JSON kind', () => {
    expectFail('/stackerdb_chunks', [], 'body', 'expected object');
    expectFail('/proposal_response', 'x', 'body', 'expected object');
    expectFail('/attachments/new', [5], 'body/0', 'expected object');
  });

  it.each(['/new_block', '/new_burn_block', '/new_microblocks', '/drop_mempool_tx'] as const)(
    '%s rejects arrays, null, strings',
    (p) => {
      for (const b of [[], null, 'x', 42]) expectFail(p, b, 'body', 'expected object');
    },
  );
});

describe('/new_mempool_tx', () => {
  it('accepts [] and fixture arrays', () => {
    expectOk('/new_mempool_tx', []);
  });
  it('rejects non-hex entries with the index in the path', () => {
    expectFail('/new_mempool_tx', ['0xzz'], 'body/0', 'expected 0x-prefixed hex string');
    const good = (byPath('/new_mempool_tx')[0].body as string[])[0];
    expectFail('/new_mempool_tx', [good, good.slice(2)], 'body/1', '0x-prefixed hex');
    expectFail('/new_mempool_tx', [good, 12], 'body/1', '0x-prefixed hex');
    expectFail('/new_mempool_tx', [good + 'a'], 'body/0', '0x-prefixed hex'); // odd digit count
    expectFail('/new_mempool_tx', [null], 'body/0');
  });
});

describe('/drop_mempool_tx', () => {
  const base = byPath('/drop_mempool_tx')[0].body as Obj;
  it('accepts a missing or null new_txid, and a hash', () => {
    expectOk('/drop_mempool_tx', { dropped_txids: [], reason: 'ReplaceByFee' });
    expectOk('/drop_mempool_tx', { ...base, new_txid: null });
    expectOk('/drop_mempool_tx', { ...base, new_txid: '0x' + 'ab'.repeat(32) });
  });
  it('rejects bad fields', () => {
    for (const k of ['dropped_txids', 'reason']) {
      const b = clone(base);
      delete b[k];
      expectFail('/drop_mempool_tx', b, `body/${k}`, 'required');
    }
    expectFail('/drop_mempool_tx', { ...base, dropped_txids: ['0x1234'] }, 'body/dropped_txids/0', '32-byte');
    expectFail('/drop_mempool_tx', { ...base, dropped_txids: '0x' }, 'body/dropped_txids', 'expected array');
    expectFail('/drop_mempool_tx', { ...base, reason: 3 }, 'body/reason', 'expected string');
    expectFail('/drop_mempool_tx', { ...base, new_txid: 'abc' }, 'body/new_txid', 'hex');
  });
});

// -------------------------------------------------------------------------------------------------
// /new_block mutations
// -------------------------------------------------------------------------------------------------

const BLOCK_REQUIRED = [
  'block_hash',
  'block_height',
  'burn_block_hash',
  'burn_block_height',
  'burn_block_time',
  'index_block_hash',
  'parent_block_hash',
  'parent_index_block_hash',
  'parent_microblock',
  'parent_microblock_sequence',
  'parent_burn_block_hash',
  'parent_burn_block_height',
  'parent_burn_block_timestamp',
  'miner_txid',
  'events',
  'transactions',
  'matured_miner_rewards',
];
const BLOCK_OPTIONAL = [
  'anchored_cost',
  'confirmed_microblocks_cost',
  'pox_v1_unlock_height',
  'pox_v2_unlock_height',
  'pox_v3_unlock_height',
  'block_time',
  'consensus_hash',
  'tenure_height',
  'cycle_number',
  'reward_set',
  'signer_bitvec',
  'signer_signature',
  'signer_signature_hash',
  'miner_signature',
];
const TX_REQUIRED = [
  'txid',
  'tx_index',
  'raw_tx',
  'raw_result',
  'status',
  'execution_cost',
  'microblock_sequence',
  'microblock_hash',
  'microblock_parent_hash',
];
const COST_KEYS = ['read_count', 'read_length', 'runtime', 'write_count', 'write_length'];
const REWARD_KEYS = [
  'from_index_consensus_hash',
  'from_stacks_block_hash',
  'recipient',
  'coinbase_amount',
  'tx_fees_anchored',
  'tx_fees_streamed_confirmed',
  'tx_fees_streamed_produced',
];
/** Required payload fields per event type (memo and stx_lock contract_identifier are optional). */
const EVENT_PAYLOAD_REQUIRED: Record<string, string[]> = {
  stx_transfer_event: ['sender', 'recipient', 'amount'],
  stx_mint_event: ['recipient', 'amount'],
  stx_burn_event: ['sender', 'amount'],
  stx_lock_event: ['locked_amount', 'unlock_height', 'locked_address'],
  ft_transfer_event: ['asset_identifier', 'sender', 'recipient', 'amount'],
  ft_mint_event: ['asset_identifier', 'recipient', 'amount'],
  ft_burn_event: ['asset_identifier', 'sender', 'amount'],
  nft_transfer_event: ['asset_identifier', 'sender', 'recipient', 'value', 'raw_value'],
  nft_mint_event: ['asset_identifier', 'recipient', 'value', 'raw_value'],
  nft_burn_event: ['asset_identifier', 'sender', 'value', 'raw_value'],
  contract_event: ['contract_identifier', 'topic', 'value', 'raw_value'],
};
const AMOUNT_FIELD: Record<string, string> = {
  stx_transfer_event: 'amount',
  stx_mint_event: 'amount',
  stx_burn_event: 'amount',
  stx_lock_event: 'locked_amount',
  ft_transfer_event: 'amount',
  ft_mint_event: 'amount',
  ft_burn_event: 'amount',
};

const blocks = byPath('/new_block').map((f) => f.body as Obj);
/**
 * A block carrying every optional top-level field the fixtures have: a Nakamoto fixture block with
 * transactions, plus the optional fields no single fixture block has together (reward_set and
 * cycle_number come from a reward-cycle-start block, pox_v*_unlock_height from an epoch 2.x block).
 */
const richBlock: Obj = (() => {
  const base = clone(blocks.find((b) => b.signer_signature && b.transactions.length > 0)!);
  for (const k of BLOCK_OPTIONAL) {
    if (base[k] !== undefined && base[k] !== null) continue;
    const donor =
      k === 'reward_set'
        ? blocks.find((b) => b.reward_set?.signers && b.reward_set.rewarded_addresses.length > 0)
        : blocks.find((b) => b[k] !== undefined && b[k] !== null);
    if (donor) base[k] = clone(donor[k]);
  }
  return base;
})();
const blockWithTxs = blocks.find((b) => b.transactions.length > 0 && b.matured_miner_rewards.length > 0)!;

describe('/new_block', () => {
  it('has fixture blocks with the interesting shapes', () => {
    expect(richBlock).toBeDefined();
    expect(blockWithTxs).toBeDefined();
  });

  it.each(BLOCK_REQUIRED)('missing %s fails as required', (k) => {
    const b = clone(richBlock);
    delete b[k];
    expectFail('/new_block', b, `body/${k}`, 'required');
  });

  it.each(BLOCK_OPTIONAL)('missing optional %s still validates', (k) => {
    const b = clone(richBlock);
    expect(b).toHaveProperty(k);
    delete b[k];
    expectOk('/new_block', b);
  });

  it('accepts null where the node sends null', () => {
    for (const k of ['block_time', 'cycle_number', 'reward_set', 'signer_bitvec', 'tenure_height']) {
      expectOk('/new_block', { ...clone(richBlock), [k]: null });
    }
  });

  it('rejects null where the node never sends null', () => {
    for (const k of [...BLOCK_REQUIRED, 'anchored_cost', 'consensus_hash', 'signer_signature']) {
      expectFail('/new_block', { ...clone(richBlock), [k]: null }, `body/${k}`);
    }
  });

  it('rejects wrong types, negative and fractional heights, malformed hashes', () => {
    const cases: [string, unknown, string][] = [
      ['block_height', -1, 'non-negative integer'],
      ['block_height', 1.5, 'non-negative integer'],
      ['block_height', '12', 'non-negative integer'],
      ['burn_block_height', -3, 'non-negative integer'],
      ['parent_microblock_sequence', -1, 'non-negative integer'],
      ['burn_block_time', '1700000000', 'non-negative integer'],
      ['block_time', 'soon', 'non-negative integer'],
      ['cycle_number', -1, 'non-negative integer'],
      ['tenure_height', -1, 'non-negative integer'],
      ['block_hash', 123, '32-byte'],
      ['block_hash', '0x1234', '32-byte'],
      ['block_hash', richBlock.block_hash.slice(2), '32-byte'],
      ['index_block_hash', '0x' + 'zz'.repeat(32), '32-byte'],
      ['consensus_hash', '0x' + '00'.repeat(32), '20-byte'],
      ['miner_signature', '0x00', '65-byte'],
      ['signer_bitvec', '0x00', 'hex string without 0x'],
      ['signer_signature', ['xyz'], 'hex'],
      ['events', 'x', 'expected array'],
      ['transactions', {}, 'expected array'],
      ['matured_miner_rewards', null, 'expected array'],
      ['reward_set', 'none', 'expected object'],
      ['anchored_cost', [], 'expected object'],
    ];
    for (const [k, v, msg] of cases) {
      const path = k === 'signer_signature' ? `body/${k}/0` : `body/${k}`;
      expectFail('/new_block', { ...clone(richBlock), [k]: v }, path, msg);
    }
  });

  it('execution costs are validated', () => {
    for (const k of COST_KEYS) {
      const b = clone(richBlock);
      delete b.anchored_cost[k];
      expectFail('/new_block', b, `body/anchored_cost/${k}`, 'required');
      const b2 = clone(richBlock);
      b2.transactions[0].execution_cost[k] = -5;
      expectFail('/new_block', b2, `body/transactions/0/execution_cost/${k}`, 'non-negative integer');
    }
  });

  it('reward_set is validated', () => {
    const b = clone(richBlock);
    b.reward_set.pox_ustx_threshold = 12;
    expectFail('/new_block', b, 'body/reward_set/pox_ustx_threshold', 'decimal');
    const b2 = clone(richBlock);
    b2.reward_set.signers[0].weight = -1;
    expectFail('/new_block', b2, 'body/reward_set/signers/0/weight');
    const b3 = clone(richBlock);
    delete b3.reward_set.rewarded_addresses;
    expectFail('/new_block', b3, 'body/reward_set/rewarded_addresses', 'required');
    const b4 = clone(richBlock);
    expect(b4.reward_set.rewarded_addresses.length).toBeGreaterThan(0);
    b4.reward_set.rewarded_addresses[0].Standard[0].bytes = 'not hex';
    expectFail('/new_block', b4, 'body/reward_set/rewarded_addresses/0/Standard/0/bytes', 'hex');
  });

  it('matured_miner_rewards entries are validated', () => {
    for (const k of REWARD_KEYS) {
      const b = clone(blockWithTxs);
      delete b.matured_miner_rewards[0][k];
      expectFail('/new_block', b, `body/matured_miner_rewards/0/${k}`, 'required');
    }
    const b = clone(blockWithTxs);
    b.matured_miner_rewards[0].coinbase_amount = '-1';
    expectFail('/new_block', b, 'body/matured_miner_rewards/0/coinbase_amount', 'decimal');
  });
});

describe('/new_block transactions', () => {
  it.each(TX_REQUIRED)('missing transactions[i].%s fails as required', (k) => {
    const b = clone(blockWithTxs);
    const i = b.transactions.length - 1;
    delete b.transactions[i][k];
    expectFail('/new_block', b, `body/transactions/${i}/${k}`, 'required');
  });

  it('rejects malformed transaction fields', () => {
    const cases: [string, unknown, string][] = [
      ['raw_tx', 'deadbeef', 'expected 0x-prefixed hex string'],
      ['raw_tx', '0xzz', 'expected 0x-prefixed hex string'],
      ['raw_tx', 5, 'expected 0x-prefixed hex string'],
      ['raw_result', '0xq1', '0x-prefixed hex'],
      ['txid', '0x' + 'ab'.repeat(31), '32-byte'],
      ['tx_index', -1, 'non-negative integer'],
      ['status', 'pending', 'expected one of'],
      ['microblock_sequence', -2, 'non-negative integer'],
      ['microblock_hash', '0x', '32-byte'],
      ['contract_abi', 'abi', 'expected object'],
      ['burnchain_op', 7, 'expected object'],
      ['vm_error', 1, 'expected string'],
      ['execution_cost', null, 'expected object'],
    ];
    for (const [k, v, msg] of cases) {
      const b = clone(blockWithTxs);
      b.transactions[0][k] = v;
      expectFail('/new_block', b, `body/transactions/0/${k}`, msg);
    }
  });

  it('accepts nullable / optional transaction fields', () => {
    const b = clone(blockWithTxs);
    Object.assign(b.transactions[0], {
      microblock_hash: null,
      microblock_parent_hash: null,
      microblock_sequence: null,
      contract_abi: null,
      contract_interface: null,
      burnchain_op: null,
      vm_error: null,
    });
    expectOk('/new_block', b);
    Object.assign(b.transactions[0], { burnchain_op: { stack_stx: { x: 1 } }, vm_error: 'boom' });
    expectOk('/new_block', b);
    for (const k of ['contract_abi', 'contract_interface', 'burnchain_op', 'vm_error']) delete b.transactions[0][k];
    expectOk('/new_block', b);
  });

  it('all three statuses occur in fixtures and are accepted', () => {
    const statuses = new Set(blocks.flatMap((b) => b.transactions.map((t: Obj) => t.status)));
    expect([...statuses].sort()).toEqual(['abort_by_post_condition', 'abort_by_response', 'success']);
  });
});

describe('events', () => {
  const allEvents = [
    ...blocks.map((b) => ({ path: '/new_block', body: b })),
    ...byPath('/new_microblocks').map((f) => ({ path: '/new_microblocks', body: f.body as Obj })),
  ];
  /** One (path, message, index) per event type present in fixtures. */
  const samples = new Map<string, { path: string; body: Obj; index: number }>();
  for (const m of allEvents) {
    m.body.events.forEach((e: Obj, index: number) => {
      if (!samples.has(e.type)) samples.set(e.type, { path: m.path, body: m.body, index });
    });
  }

  it('fixtures contain most event types', () => {
    expect(samples.size).toBeGreaterThanOrEqual(8);
    for (const t of samples.keys()) expect(EVENT_TYPES).toContain(t);
  });

  it('each event base field and payload field is required', () => {
    let checked = 0;
    for (const [type, { path, body, index }] of samples) {
      for (const k of ['txid', 'event_index', 'committed', type]) {
        const b = clone(body);
        delete b.events[index][k];
        expectFail(path, b, `body/events/${index}/${k}`, 'required');
        checked++;
      }
      for (const k of EVENT_PAYLOAD_REQUIRED[type]) {
        const b = clone(body);
        delete b.events[index][type][k];
        expectFail(path, b, `body/events/${index}/${type}/${k}`, 'required');
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('payload named after a different type fails', () => {
    const { path, body, index } = samples.get('stx_transfer_event')!;
    const b = clone(body);
    b.events[index].type = 'stx_mint_event';
    expectFail(path, b, `body/events/${index}/stx_mint_event`, 'required');
  });

  it('unknown or missing event type fails naming events/i/type', () => {
    const { path, body, index } = samples.get('stx_mint_event')!;
    const b = clone(body);
    b.events[index].type = 'future_event';
    expectFail(path, b, `body/events/${index}/type`, 'unknown event type "future_event"');
    const b2 = clone(body);
    delete b2.events[index].type;
    expectFail(path, b2, `body/events/${index}/type`, 'required');
    const b3 = clone(body);
    b3.events[index] = 'x';
    expectFail(path, b3, `body/events/${index}`, 'expected event object');
  });

  it('amounts must be decimal strings, raw values hex, committed boolean', () => {
    for (const [type, { path, body, index }] of samples) {
      const amountKey = AMOUNT_FIELD[type];
      if (amountKey) {
        for (const bad of [100, '-1', '1.5', '0x10']) {
          const b = clone(body);
          b.events[index][type][amountKey] = bad;
          expectFail(path, b, `body/events/${index}/${type}/${amountKey}`, 'decimal');
        }
      }
      if (EVENT_PAYLOAD_REQUIRED[type].includes('raw_value')) {
        const b = clone(body);
        b.events[index][type].raw_value = 'nothex';
        expectFail(path, b, `body/events/${index}/${type}/raw_value`, '0x-prefixed hex');
      }
      const b = clone(body);
      b.events[index].committed = 'yes';
      expectFail(path, b, `body/events/${index}/committed`, 'expected boolean');
      const b2 = clone(body);
      b2.events[index].event_index = -1;
      expectFail(path, b2, `body/events/${index}/event_index`, 'non-negative integer');
    }
  });

  it('synthetic burn events of types absent from fixtures validate', () => {
    const { body, index } = samples.get('stx_mint_event')!;
    const base = body.events[index];
    const b = clone(body);
    b.events.push(
      {
        txid: base.txid,
        event_index: 99,
        committed: true,
        type: 'ft_burn_event',
        ft_burn_event: { asset_identifier: 'SP1.x::y', sender: 'SP2', amount: '5' },
      },
      {
        txid: base.txid,
        event_index: 100,
        committed: false,
        type: 'nft_burn_event',
        nft_burn_event: { asset_identifier: 'SP1.x::y', sender: 'SP2', value: { UInt: 1 }, raw_value: '0x0100' },
      },
    );
    expectOk('/new_block', b);
    b.events[b.events.length - 1].nft_burn_event.raw_value = '0100';
    expectFail('/new_block', b, `body/events/${b.events.length - 1}/nft_burn_event/raw_value`);
  });

  it('optional payload fields (memo, stx_lock contract_identifier) may be absent', () => {
    const { path, body, index } = samples.get('stx_transfer_event')!;
    const b = clone(body);
    delete b.events[index].stx_transfer_event.memo;
    expectOk(path, b);
    b.events[index].stx_transfer_event.memo = '0x00ff';
    expectOk(path, b);
    b.events[index].stx_transfer_event.memo = 'hello';
    expectFail(path, b, `body/events/${index}/stx_transfer_event/memo`, 'hex');
  });
});

describe('forward compatibility', () => {
  it('unknown keys are kept at every level', () => {
    const b = clone(richBlock);
    b.future_top = { a: 1 };
    b.transactions[0].future_tx = 'x';
    if (b.events.length === 0) b.events = clone(blocks.find((x) => x.events.length > 0)!.events);
    const ei = b.events.findIndex((e: Obj) => e.type === 'stx_mint_event' || e.type === 'stx_transfer_event');
    expect(ei).toBeGreaterThanOrEqual(0);
    b.events[ei].future_ev = 1;
    b.events[ei][b.events[ei].type].future_payload = [1];
    b.reward_set.future_rs = true;
    const r = expectOk('/new_block', b);
    const m = r.message as Obj;
    expect(m.future_top).toEqual({ a: 1 });
    expect(m.transactions[0].future_tx).toBe('x');
    expect(m.events[ei].future_ev).toBe(1);
    expect(m.events[ei][b.events[ei].type].future_payload).toEqual([1]);
    expect(m.reward_set.future_rs).toBe(true);

    const burn = clone(byPath('/new_burn_block')[0].body as Obj);
    burn.pox_cycle = 3;
    expect((expectOk('/new_burn_block', burn).message as Obj).pox_cycle).toBe(3);
  });
});

describe('/new_burn_block', () => {
  const burns = byPath('/new_burn_block').map((f) => f.body as Obj);
  const withRecipients = burns.find((b) => b.reward_recipients.length > 0 && b.reward_slot_holders.length > 0)!;
  const withConsensus = burns.find((b) => 'consensus_hash' in b)!;

  it('required / optional fields', () => {
    for (const k of ['burn_block_hash', 'burn_block_height', 'burn_amount', 'reward_recipients', 'reward_slot_holders']) {
      const b = clone(withRecipients);
      delete b[k];
      expectFail('/new_burn_block', b, `body/${k}`, 'required');
    }
    for (const k of ['consensus_hash', 'parent_burn_block_hash']) {
      const b = clone(withConsensus);
      delete b[k];
      expectOk('/new_burn_block', b);
    }
  });

  it('wrong types fail', () => {
    expectFail('/new_burn_block', { ...withRecipients, burn_block_height: -1 }, 'body/burn_block_height');
    expectFail('/new_burn_block', { ...withRecipients, burn_amount: '5' }, 'body/burn_amount');
    expectFail('/new_burn_block', { ...withRecipients, burn_block_hash: 'abc' }, 'body/burn_block_hash', '32-byte');
    expectFail('/new_burn_block', { ...withConsensus, consensus_hash: '0x00' }, 'body/consensus_hash', '20-byte');
    const b = clone(withRecipients);
    delete b.reward_recipients[0].amt;
    expectFail('/new_burn_block', b, 'body/reward_recipients/0/amt', 'required');
    const b2 = clone(withRecipients);
    b2.reward_recipients[0].recipient = 5;
    expectFail('/new_burn_block', b2, 'body/reward_recipients/0/recipient', 'expected string');
    const b3 = clone(withRecipients);
    b3.reward_slot_holders[0] = null;
    expectFail('/new_burn_block', b3, 'body/reward_slot_holders/0');
  });
});

describe('/new_microblocks', () => {
  const mb = byPath('/new_microblocks')[0].body as Obj;
  it('required top-level fields', () => {
    for (const k of [
      'parent_index_block_hash',
      'burn_block_hash',
      'burn_block_height',
      'burn_block_timestamp',
      'transactions',
      'events',
    ]) {
      const b = clone(mb);
      delete b[k];
      expectFail('/new_microblocks', b, `body/${k}`, 'required');
    }
  });
  it('microblock fields of microblock transactions are not nullable', () => {
    for (const k of ['microblock_hash', 'microblock_parent_hash', 'microblock_sequence']) {
      const b = clone(mb);
      b.transactions[0][k] = null;
      expectFail('/new_microblocks', b, `body/transactions/0/${k}`);
    }
    const b = clone(mb);
    b.transactions[0].raw_tx = '0xzz';
    expectFail('/new_microblocks', b, 'body/transactions/0/raw_tx', 'expected 0x-prefixed hex string');
    const b2 = clone(mb);
    b2.burn_block_height = -1;
    expectFail('/new_microblocks', b2, 'body/burn_block_height', 'non-negative integer');
  });
});

describe('golden observer probes', () => {
  interface Probe {
    case: string;
    request: { method: string; path: string; content_type: string | null; body_prefix: string | null };
    status: number;
  }
  const probes = JSON.parse(readFileSync(join(fixturesDir, 'golden', '_observer.json'), 'utf8')) as Probe[];

  /** The full body of a probe: the prefix itself if it is complete JSON, else the fixture line it starts. */
  function fullBody(p: Probe): { body: unknown } | null {
    const prefix = p.request.body_prefix;
    if (prefix === null || prefix === '') return null;
    try {
      return { body: JSON.parse(prefix) };
    } catch {
      const norm = normalizeObserverPath(p.request.path);
      const line = fixtures.find((f) => f.path === norm && f.raw.startsWith(prefix));
      return line ? { body: line.body } : null;
    }
  }

  const jsonPosts = probes.filter(
    (p) => p.request.method === 'POST' && p.request.content_type === 'application/json',
  );

  it('probes the reference rejected with a server error are invalid messages', () => {
    let n = 0;
    for (const p of jsonPosts.filter((x) => x.status >= 500)) {
      const fb = fullBody(p);
      if (!fb) continue;
      const r = validateObserverMessage(p.request.path, fb.body);
      expect(r.ok, p.case).toBe(false);
      if (!r.ok) {
        expect(r.code, p.case).toBe('invalid_body');
        expect(r.message, p.case).toMatch(/^body[/:]/);
      }
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(4);
  });

  it('probes the reference accepted validate', () => {
    let n = 0;
    for (const p of jsonPosts.filter((x) => x.status === 200)) {
      const fb = fullBody(p);
      expect(fb, `${p.case}: body recoverable`).not.toBeNull();
      const r = validateObserverMessage(p.request.path, fb!.body);
      if (!r.ok) throw new Error(`${p.case}: ${r.message}`);
      expect(r.path).toBe(normalizeObserverPath(p.request.path));
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(7);
  });

  it('probes on unknown paths are reported as unknown paths', () => {
    for (const p of jsonPosts.filter((x) => x.status === 404)) {
      const fb = fullBody(p);
      if (!fb) continue;
      const r = validateObserverMessage(p.request.path, fb.body);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.code).toBe('unknown_path');
    }
  });
});
