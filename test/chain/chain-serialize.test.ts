// Golden check of the pure chain serializers: raw txs and node events from each recorded event stream
// must produce exactly the reference's static tx JSON and event JSON.
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { decodeTx, type TxStaticJson } from '../../src/chain/tx.js';
import { withContractAbi, type ContractAbi } from '../../src/chain/contract-call.js';
import { txEventsFromNode, nodeEventToEvent, type ChainEvent, type NodeEvent } from '../../src/chain/events.js';
import { clarityValue, clarityTypeName, abiTypeToString } from '../../src/chain/clarity.js';

const FIXTURES = resolve(process.env.STACKS_FIXTURES_DIR ?? '../shared/fixtures');
const GOLDEN_DIR = join(FIXTURES, 'golden');
const EVENTS_DIR = join(FIXTURES, 'events');

const STATIC_KEYS = [
  'tx_id', 'nonce', 'fee_rate', 'sender_address', 'sponsored', 'sponsor_address', 'sponsor_nonce',
  'post_condition_mode', 'post_conditions', 'anchor_mode', 'tx_type', 'token_transfer', 'smart_contract',
  'contract_call', 'poison_microblock', 'coinbase_payload', 'tenure_change_payload',
] as const;

interface GoldenEntry { request: string; status: number; body: any }

interface ScenarioData {
  rawTxs: Map<string, string>;
  /** Latest `contract_abi` per deployed contract id. */
  abis: Map<string, ContractAbi>;
  /** Per tx: the normalized event list of every node message that carried the tx. */
  events: Map<string, ChainEvent[][]>;
  unknownEventTypes: Set<string>;
}

function loadScenario(name: string): ScenarioData {
  const data: ScenarioData = { rawTxs: new Map(), abis: new Map(), events: new Map(), unknownEventTypes: new Set() };
  const lines = readFileSync(join(EVENTS_DIR, `${name}.tsv`), 'utf8').split('\n');
  for (const line of lines) {
    if (!line.trim()) continue;
    const [, , path, json] = line.split('\t');
    if (path === '/new_mempool_tx') {
      for (const raw of JSON.parse(json) as string[]) {
        const d = decodeTx(raw);
        data.rawTxs.set(d.txId, raw);
      }
      continue;
    }
    if (path !== '/new_block' && path !== '/new_microblocks') continue;
    const msg = JSON.parse(json) as {
      transactions: { txid: string; raw_tx: string; status: string; contract_abi?: ContractAbi | null }[];
      events: NodeEvent[];
    };
    const status = new Map<string, string>();
    for (const tx of msg.transactions) {
      const txId = tx.txid.toLowerCase();
      status.set(txId, tx.status);
      data.rawTxs.set(txId, tx.raw_tx);
      if (tx.contract_abi) {
        const d = decodeTx(tx.raw_tx);
        if (d.smartContractContractId) data.abis.set(d.smartContractContractId, tx.contract_abi);
      }
    }
    for (const ev of msg.events) if (nodeEventToEvent(ev) === null) data.unknownEventTypes.add(ev.type);
    const grouped = txEventsFromNode(msg.events, txId => status.get(txId) === 'success');
    for (const tx of msg.transactions) {
      const txId = tx.txid.toLowerCase();
      const list = data.events.get(txId) ?? [];
      list.push(grouped.get(txId) ?? []);
      data.events.set(txId, list);
    }
  }
  return data;
}

function pickStatic(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of STATIC_KEYS) if (k in body) out[k] = body[k];
  return out;
}

const scenarios = readdirSync(GOLDEN_DIR)
  .filter(f => f.endsWith('.json') && !f.startsWith('_') && f.split('.').length === 2)
  .map(f => f.slice(0, -'.json'.length))
  .sort();

const TX_PATH = /^\/extended\/v1\/tx\/(0x[0-9a-fA-F]{64})(?:\?(.*))?$/;

describe('chain serializers against golden answers', () => {
  it('finds scenarios', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(6);
  });

  let totalTx = 0;
  let totalEventLists = 0;
  let totalTxEvents = 0;

  for (const scenario of scenarios) {
    it(`${scenario}: tx static JSON and events match`, () => {
      const golden = JSON.parse(readFileSync(join(GOLDEN_DIR, `${scenario}.json`), 'utf8')) as GoldenEntry[];
      const data = loadScenario(scenario);
      expect([...data.unknownEventTypes]).toEqual([]);
      let txCount = 0;

      for (const entry of golden) {
        const m = TX_PATH.exec(entry.request);
        if (!m || entry.status !== 200) continue;
        const txId = m[1].toLowerCase();
        const params = new URLSearchParams(m[2] ?? '');
        const raw = data.rawTxs.get(txId);
        expect(raw, `${scenario} ${txId} raw tx present`).toBeDefined();
        const decoded = decodeTx(raw!);
        expect(decoded.txId).toBe(txId);

        const abi = decoded.contractCallContractId ? data.abis.get(decoded.contractCallContractId) ?? null : null;
        const api: TxStaticJson = withContractAbi(decoded.api, abi, {
          excludeFunctionArgs: params.get('exclude_function_args') === 'true',
        });
        expect(api, `${scenario} ${entry.request}`).toEqual(pickStatic(entry.body));
        txCount++;

        if (Array.isArray(entry.body.events)) {
          const offset = Number(params.get('event_offset') ?? 0);
          const limit = Number(params.get('event_limit') ?? 0) || 20;
          const candidates = data.events.get(txId) ?? [];
          expect(candidates.length, `${scenario} ${txId} seen in a block`).toBeGreaterThan(0);
          const matches = candidates.some(
            list =>
              list.length === entry.body.event_count &&
              equalJson(list.slice(offset, offset + limit).map(e => e.api), entry.body.events),
          );
          if (!matches) {
            // show the most recent candidate for a readable diff
            expect(candidates[candidates.length - 1].slice(offset, offset + limit).map(e => e.api), entry.request).toEqual(
              entry.body.events,
            );
          }
          expect(matches).toBe(true);
          totalEventLists++;
        }
      }

      // /extended/v1/tx/events answers: every listed event is one of ours, field for field.
      for (const entry of golden) {
        if (!entry.request.startsWith('/extended/v1/tx/events') || entry.status !== 200) continue;
        for (const ev of entry.body.events as { tx_id: string; event_index: number }[]) {
          const lists = data.events.get(ev.tx_id) ?? [];
          const found = lists.some(list => list.some(e => e.eventIndex === ev.event_index && equalJson(e.api, ev)));
          expect(found, `${scenario} ${entry.request} ${ev.tx_id}#${ev.event_index}`).toBe(true);
          totalTxEvents++;
        }
      }

      expect(txCount).toBeGreaterThan(0);
      totalTx += txCount;
    });
  }

  it('reports totals', () => {
    console.log(`golden tx lookups matched: ${totalTx}; event lists matched: ${totalEventLists}; /tx/events items matched: ${totalTxEvents}`);
    expect(totalTx).toBeGreaterThan(50);
  });
});

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => x !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, x]) => [k, canonical(x)]),
    );
  }
  return v;
}

function equalJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

describe('clarity helpers', () => {
  it('renders values and types', () => {
    expect(clarityValue('0x0100000000000000000000000000000001')).toEqual({
      hex: '0x0100000000000000000000000000000001',
      repr: 'u1',
    });
    expect(clarityValue('0703')).toEqual({ hex: '0x0703', repr: '(ok true)' });
    expect(clarityTypeName('0x0100000000000000000000000000000001')).toBe('uint');
    expect(
      clarityTypeName(
        '0x0c000000020968617368627974657302000000145146f0566e9796602a677d895852e9c0fe5686f70776657273696f6e020000000100',
      ),
    ).toBe('(tuple (hashbytes (buff 20)) (version (buff 1)))');
    expect(abiTypeToString({ optional: { buffer: { length: 65 } } })).toBe('(optional (buff 65))');
    expect(abiTypeToString({ list: { type: 'principal', length: 10 } })).toBe('(list 10 principal)');
    expect(abiTypeToString({ response: { ok: 'bool', error: 'int128' } })).toBe('(response bool int)');
  });

  it('withContractAbi falls back when the ABI lacks the function', () => {
    const api = {
      tx_id: '0x00', nonce: 0, fee_rate: '0', sender_address: 'ST000000000000000000002AMW42H', sponsored: false,
      post_condition_mode: 'deny' as const, post_conditions: [], anchor_mode: 'any' as const, tx_type: 'contract_call' as const,
      contract_call: {
        contract_id: 'ST000000000000000000002AMW42H.x', function_name: 'f', function_signature: '',
        function_args: [{ hex: '0x0100000000000000000000000000000001', repr: 'u1', name: '', type: 'uint' }],
      },
    };
    const abi: ContractAbi = { functions: [{ name: 'g', access: 'public', args: [], outputs: { type: 'bool' } }] };
    expect(withContractAbi(api, abi).contract_call).toEqual(api.contract_call);
    const abi2: ContractAbi = {
      functions: [{ name: 'f', access: 'read_only', args: [{ name: 'n', type: 'uint128' }], outputs: { type: 'bool' } }],
    };
    expect(withContractAbi(api, JSON.stringify(abi2)).contract_call).toEqual({
      contract_id: 'ST000000000000000000002AMW42H.x', function_name: 'f', function_signature: '(define-read-only (f (n uint)))',
      function_args: [{ hex: '0x0100000000000000000000000000000001', repr: 'u1', name: 'n', type: 'uint' }],
    });
  });
});
