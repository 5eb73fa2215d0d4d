/**
 * Rosetta (/rosetta/v1): the operation builder without a database, the error objects, and — against replayed fixtures —
 * that a block's operations move exactly the STX the /extended answers show, and the reconciliation bar: walking
 * /block from the genesis block and applying every operation to a ledger gives /account/balance at every block.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFixture } from '../helpers/fixtures.js';
import { startTestService, replay, type TestService, settled } from '../helpers/service.js';
import { migrate } from '../../src/store/migrate.js';
import { ChainGenerator, postMessage } from '../../load/generator/index.js';
import { txOperations, rosettaTransaction, pendingContractCall, stxDeltas, parseMemo, type OpsTx, type OpsEvent } from '../../src/chain/rosetta-ops.js';
import { poxAddressToBtc } from '../../src/chain/btc-address.js';
import { ajvStyleMessage, schemaError } from '../../src/api/rosetta.js';
import { AccountBalanceRequest, BlockRequest } from '../../src/api/schemas/rosetta.js';
import { readableByReference, referenceTxid } from '../../src/chain/rosetta-wire.js';
import { createHash } from 'node:crypto';
import {
  deserializeTransaction,
  makeUnsignedSTXTokenTransfer,
  makeUnsignedContractDeploy,
  privateKeyToPublic,
  randomPrivateKey,
  TransactionSigner,
} from '@stacks/transactions';
import { getOk, post } from '../helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed JSON answers
type Json = Record<string, any>;

const tx = (over: Partial<OpsTx>): OpsTx => ({
  tx_id: '0xaa',
  tx_type: 'token_transfer',
  status: 'success',
  fee_rate: '180',
  sender_address: 'ST1SENDER',
  raw_result: '0x0703',
  ...over,
});

describe('rosetta operations (pure)', () => {
  it('a token transfer: fee, sender, receiver; the memo in metadata and on the tx', () => {
    const memo = '0x' + Buffer.from('hi').toString('hex') + '00'.repeat(32);
    const t = tx({ token_transfer: { recipient_address: 'ST2RECIPIENT', amount: '500', memo } });
    const r = rosettaTransaction(t, { network: 'testnet', events: [] });
    expect(r.operations.map((o) => [o.type, o.account?.address, o.amount?.value])).toEqual([
      ['fee', 'ST1SENDER', '-180'],
      ['token_transfer', 'ST1SENDER', '-500'],
      ['token_transfer', 'ST2RECIPIENT', '500'],
    ]);
    expect(r.operations[2].related_operations).toEqual([{ index: 1 }]);
    expect(r.operations[1].coin_change).toEqual({ coin_action: 'coin_spent', coin_identifier: { identifier: '0xaa:1' } });
    expect(r.metadata).toEqual({ memo: 'hi' });
    // an all-zero memo: metadata.memo null on the operations, no tx metadata
    const z = rosettaTransaction(tx({ token_transfer: { recipient_address: 'ST2', amount: '1', memo: '0x' + '00'.repeat(34) } }), { network: 'testnet' });
    expect(z.operations[1].metadata).toEqual({ memo: null });
    expect(z.metadata).toBeUndefined();
    expect(parseMemo('0x')).toBeNull();
  });

  it('a contract call: fee, call, then its STX events (transfer, mint, burn, lock); FT events need metadata', () => {
    const t = tx({
      tx_type: 'contract_call',
      contract_call: { contract_id: 'ST1.c', function_name: 'f', function_signature: '', function_args: [] },
    });
    const ev = (o: Partial<OpsEvent>): OpsEvent => ({
      event_type: 'stx_asset', asset_event_type: 'transfer', sender: null, recipient: null, amount: null, memo: null,
      locked_address: null, unlock_height: null, asset_identifier: null, ...o,
    });
    const ops = txOperations(t, {
      network: 'testnet',
      events: [
        ev({ sender: 'ST1SENDER', recipient: 'ST3', amount: '7' }),
        ev({ asset_event_type: 'mint', recipient: 'ST4', amount: '5' }),
        ev({ asset_event_type: 'burn', sender: 'ST1SENDER', amount: '2' }),
        ev({ event_type: 'stx_lock', locked_address: 'ST1SENDER', amount: '100', unlock_height: 50 }),
        ev({ event_type: 'fungible_token_asset', sender: 'ST1SENDER', recipient: 'ST3', amount: '9', asset_identifier: 'ST1.tok::t' }),
      ],
    });
    expect(ops.map((o) => o.type)).toEqual(['fee', 'contract_call', 'token_transfer', 'token_transfer', 'mint', 'burn', 'stx_lock']);
    expect(ops.map((o) => o.operation_identifier.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(ops[6].metadata).toEqual({ locked: '100', unlock_height: '50' });
    const withFt = txOperations(t, {
      network: 'testnet',
      events: [ev({ event_type: 'fungible_token_asset', sender: 'ST1SENDER', recipient: 'ST3', amount: '9', asset_identifier: 'ST1.tok::t' })],
      ftMetadata: () => ({ symbol: 'TOK', decimals: 2 }),
    });
    expect(withFt.slice(2).map((o) => [o.amount?.value, o.amount?.currency.symbol, o.amount?.metadata])).toEqual([
      ['-9', 'TOK', { token_type: 'ft' }],
      ['9', 'TOK', { token_type: 'ft' }],
    ]);
    // STX moved: fee + transfer + burn out of the sender (a lock moves nothing: it states the locked amount)
    const d = stxDeltas(ops);
    expect(d.get('ST1SENDER')).toBe(-180n - 7n - 2n);
    expect(d.get('ST3')).toBe(7n);
    expect(d.get('ST4')).toBe(5n);
  });

  it('a coinbase: miner rewards (sum of their parts) and unlocks; failed txs move only their fee', () => {
    const ops = txOperations(tx({ tx_type: 'coinbase' }), {
      network: 'mainnet',
      minerRewards: [{ recipient: 'SP1', coinbase_amount: '1000', tx_fees_anchored: '1', tx_fees_streamed_confirmed: '2', tx_fees_streamed_produced: '3' }],
      unlocks: [{ tx_id: '0xbb', stacker_address: 'SP2', unlocked_amount: '40' }],
    });
    expect(ops.map((o) => [o.type, o.amount?.value])).toEqual([
      ['coinbase', undefined],
      ['miner_reward', '1006'],
      ['stx_unlock', '40'],
    ]);
    const failed = txOperations(tx({ status: 'abort_by_response', token_transfer: { recipient_address: 'ST2', amount: '9', memo: '0x' } }), { network: 'testnet' });
    expect(stxDeltas(failed).get('ST1SENDER')).toBe(-180n);
  });

  it('a pending contract call: listed only once stored among mined txs, its call operation read from there', () => {
    const call = { contract_id: 'ST000000000000000000002AMW42H.pox-4', function_name: 'revoke-delegate-stx', function_signature: '', function_args: [] };
    const pending = tx({ tx_type: 'contract_call', status: '', raw_result: '', contract_call: call });
    expect(pendingContractCall(pending, undefined, { network: 'testnet' })).toBeUndefined();
    const stored = { ...pending, status: 'abort_by_response', raw_result: '0x080100000000000000000000000000000022' };
    const r = pendingContractCall(pending, stored, { network: 'testnet' })!;
    expect(r.operations.map((o) => [o.type, o.status])).toEqual([
      ['fee', ''],
      ['revoke_delegate_stx', 'abort_by_response'],
    ]);
    expect(r.operations[1].metadata).toEqual({ result: 'false' });
  });

  it('PoX addresses as BTC addresses (p2pkh, p2sh, p2wpkh)', () => {
    const h = Buffer.from('751e76e8199196d454941c45d1b3a323f1433bd6', 'hex');
    expect(poxAddressToBtc(0, h, true)).toBe('1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH');
    expect(poxAddressToBtc(4, h, true)).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    expect(poxAddressToBtc(1, h, false)?.startsWith('2')).toBe(true);
    expect(poxAddressToBtc(9, h, true)).toBeNull();
  });

  it('schema failures are worded and coded like the reference validator', () => {
    const code = (schema: { safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } } }, body: unknown) => {
      const r = schema.safeParse(body);
      return schemaError(ajvStyleMessage(r.error!.issues as never)).code;
    };
    expect(code(BlockRequest, {})).toBe(613);
    expect(code(BlockRequest, { network_identifier: { blockchain: 'stacks', network: 'testnet' } })).toBe(615);
    expect(code(BlockRequest, { network_identifier: { network: 'testnet' }, block_identifier: {} })).toBe(617);
    expect(code(BlockRequest, { network_identifier: { blockchain: 'stacks' }, block_identifier: {} })).toBe(618);
    const net = { blockchain: 'stacks', network: 'testnet' };
    expect(code(AccountBalanceRequest, { network_identifier: net })).toBe(609);
    expect(code(AccountBalanceRequest, { network_identifier: net, account_identifier: { address: 'x' }, currencies: [] })).toBe(612);
    expect(ajvStyleMessage(AccountBalanceRequest.safeParse({ network_identifier: net }).error!.issues)).toBe("must have required property 'account_identifier'");
  });
});

describe("what the reference's transaction library (@stacks/transactions 6.11.3) reads (src/chain/rosetta-wire.ts)", () => {
  const keys = [randomPrivateKey(), randomPrivateKey(), randomPrivateKey()];
  const pubs = keys.map((k) => privateKeyToPublic(k) as string);
  /** A 2-of-3 multisig transfer with the given hash mode, signed by the first two keys. */
  async function multisig(hashMode: number) {
    const tx = await makeUnsignedSTXTokenTransfer({ recipient: 'ST000000000000000000002AMW42H', amount: 10n, fee: 10n, nonce: 1n, numSignatures: 2, publicKeys: pubs, network: 'testnet' });
    (tx.auth.spendingCondition as { hashMode: number }).hashMode = hashMode;
    const signer = new TransactionSigner(tx);
    signer.signOrigin(keys[0]);
    signer.signOrigin(keys[1]);
    signer.appendOrigin(pubs[2]);
    return tx.serialize();
  }
  const readable = (hex: string) => readableByReference(deserializeTransaction(hex));
  // multisig fields start after version 1, chain id 4, auth type 1, hash mode 1, signer 20, nonce 8, fee 8, count 4
  const FIRST_FIELD = 47;

  it('sequential multisig (P2SH, P2WSH) is read; non-sequential (hash modes 5 and 7) is not', async () => {
    expect(readable(await multisig(1))).toBe(true);
    expect(readable(await multisig(3))).toBe(true);
    expect(readable(await multisig(5))).toBe(false);
    expect(readable(await multisig(7))).toBe(false);
  });

  it('a P2SH condition with a signature marked uncompressed is refused (6.11.3 checks uncompressed keys under P2SH)', async () => {
    const b = Buffer.from(await multisig(1), 'hex');
    expect(b[FIRST_FIELD]).toBe(0x02); // a compressed signature field
    b[FIRST_FIELD] = 0x03;
    expect(readable(b.toString('hex'))).toBe(false);
  });

  it('payload types 7 and 8 (tenure change, Nakamoto coinbase) are refused; a versioned contract over 100,000 bytes too', async () => {
    const t = await makeUnsignedSTXTokenTransfer({ recipient: 'ST000000000000000000002AMW42H', amount: 1n, fee: 1n, nonce: 0n, publicKey: pubs[0], network: 'testnet' });
    const wire = deserializeTransaction(t.serialize());
    expect(readableByReference(wire)).toBe(true);
    for (const type of [7, 8]) {
      (wire.payload as { payloadType: number }).payloadType = type;
      expect(readableByReference(wire)).toBe(false);
    }
    const deploy = await makeUnsignedContractDeploy({ contractName: 'c', codeBody: '(define-constant a u1)', publicKey: pubs[0], fee: 1n, nonce: 0n, network: 'testnet', clarityVersion: 2 });
    const d = deserializeTransaction(deploy.serialize());
    expect(readableByReference(d)).toBe(true);
    (d.payload as unknown as { codeBody: { content: string } }).codeBody.content = ';'.repeat(100_001);
    expect(readableByReference(d)).toBe(false);
  });

  it("the txid is the hash of 6.11.3's re-serialization: a memo that is not UTF-8 keeps its NUL padding there", async () => {
    const t = await makeUnsignedSTXTokenTransfer({ recipient: 'ST000000000000000000002AMW42H', amount: 1n, fee: 1n, nonce: 0n, publicKey: pubs[0], network: 'testnet', memo: 'hello' });
    const utf8 = t.serializeBytes();
    expect(referenceTxid(deserializeTransaction(utf8), utf8)).toBe(t.txid());
    // the memo is the last 34 bytes: one byte that is not UTF-8, then NULs
    const bytes = Buffer.from(utf8);
    bytes.fill(0, bytes.length - 34);
    bytes[bytes.length - 34] = 0xff;
    const prefix = bytes.subarray(0, bytes.length - 34);
    // decoded, 0xff is U+FFFD (3 bytes in UTF-8): 36 bytes with the 33 NULs
    const want = createHash('sha512-256').update(Buffer.concat([prefix, Buffer.from('efbfbd', 'hex'), Buffer.alloc(33)])).digest('hex');
    const wire = deserializeTransaction(bytes);
    expect(referenceTxid(wire, bytes)).toBe(want);
    expect(wire.txid()).not.toBe(want);
  });
});


/**
 * Walks /block from block 2 to the tip, applying every operation to a ledger (total and locked STX per account, and
 * the balance of every other currency — fungible tokens, named by symbol — started from the balances at block 1: the
 * genesis allocations are not operations), and compares with /account/balance at each block for every account and
 * currency the block touched. Returns the mismatches, and how many token balances were compared.
 */
async function reconcileAll(svc: TestService, network: { blockchain: string; network: string }): Promise<{ mismatches: string[]; ftChecks: number }> {
  const tip = (await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: {} })).body.block.block_identifier.index as number;
  const balancesAt = async (address: string, index: number, sub?: string) => {
    const account = sub ? { address, sub_account: { address: sub } } : { address };
    const r = await post(svc, '/rosetta/v1/account/balance', { network_identifier: network, account_identifier: account, block_identifier: { index } });
    expect(r.status).toBe(200);
    return new Map((r.body.balances as Json[]).map((b) => [b.currency.symbol as string, BigInt(b.value)]));
  };
  // Block 1's genesis allocations are not operations (the reference lists none): the ledger starts from the balances
  // at block 1 of every account it meets (total and locked, /account/balance's sub-accounts). An stx_lock states the
  // account's locked amount (absolute: a stack-extend repeats it), an stx_unlock releases it; the STX balance
  // answered is the spendable one, total minus locked.
  const total = new Map<string, bigint>(); // `${address} ${symbol}`
  const locked = new Map<string, bigint>();
  const mismatches: string[] = [];
  let ftChecks = 0;
  for (let h = 2; h <= tip; h++) {
    const { block } = (await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: { index: h } })).body;
    const touched = new Set<string>();
    for (const t of block.transactions as Json[]) {
      for (const op of t.operations as Json[]) {
        if (!op.amount || !op.account) continue;
        if (op.type !== 'fee' && op.status !== 'success') continue;
        const a = op.account.address as string;
        const symbol = op.amount.currency.symbol as string;
        const key = `${a} ${symbol}`;
        if (!total.has(key)) {
          const at1 = await balancesAt(a, 1);
          if (symbol === 'STX') {
            const l = (await balancesAt(a, 1, 'StackedBalance')).get('STX')!;
            locked.set(a, l);
            total.set(key, at1.get('STX')! + l);
          } else total.set(key, at1.get(symbol) ?? 0n);
        }
        const v = BigInt(op.amount.value);
        if (op.type === 'stx_lock') locked.set(a, -v);
        else if (op.type === 'stx_unlock') locked.set(a, 0n);
        else total.set(key, total.get(key)! + v);
        touched.add(key);
      }
    }
    for (const key of touched) {
      const [a, symbol] = key.split(' ');
      const answered = await balancesAt(a, h);
      const want = answered.get(symbol) ?? 0n;
      const have = symbol === 'STX' ? total.get(key)! - locked.get(a)! : total.get(key)!;
      if (symbol !== 'STX') ftChecks++;
      if (want !== have) mismatches.push(`block ${h} ${a} ${symbol}: ledger ${have}, balance ${want}`);
    }
  }
  return { mismatches, ftChecks };
}

const reconcile = async (svc: TestService, network: { blockchain: string; network: string }) => (await reconcileAll(svc, network)).mismatches;

for (const scenario of [
  { name: 'mocknet', chainId: 'testnet' },
  { name: 'regtest-env-pox-4-stack-stx-in-reward-phase-S1', chainId: 'testnet' },
  { name: 'mainnet-out-of-order-microblock', chainId: 'mainnet' },
  { name: 'epoch-3-transition', chainId: 'testnet' },
  { name: 'mainnet-reorg-scenario2', chainId: 'mainnet' },
  { name: 'fuzzed-transactions-1', chainId: 'testnet' },
]) {
  describe(`rosetta against ${scenario.name}`, () => {
    let svc: TestService;
    const network = { blockchain: 'stacks', network: scenario.chainId };
    const otherNetwork = scenario.chainId === 'mainnet' ? 'testnet' : 'mainnet';
    beforeAll(async () => {
      // the stream delivered, every message accepted: a copy of its imported database (test/helpers/fixture-db.ts)
      svc = await startTestService({ STACKS_CHAIN_ID: scenario.chainId }, { fixture: scenario.name });
    }, 300_000);
    afterAll(async () => svc?.stop());

    it('answers Rosetta error objects: malformed JSON, missing fields, wrong network, unknown block and tx, unknown route', async () => {
      const cases: [string, unknown, number, number][] = [
        ['/rosetta/v1/block', '{"network_identifier":', 400, 609],
        ['/rosetta/v1/block', {}, 400, 613],
        ['/rosetta/v1/block', { network_identifier: network }, 400, 615],
        ['/rosetta/v1/block', { network_identifier: { ...network, network: otherNetwork }, block_identifier: {} }, 400, 610],
        ['/rosetta/v1/block', { network_identifier: { ...network, blockchain: 'bitcoin' }, block_identifier: {} }, 400, 611],
        ['/rosetta/v1/block', { network_identifier: network, block_identifier: { index: 1e9 } }, 404, 605],
        ['/rosetta/v1/block', { network_identifier: network, block_identifier: { hash: '0x' + 'ff'.repeat(32) } }, 404, 605],
        ['/rosetta/v1/block', { network_identifier: network, block_identifier: { hash: 'abc' } }, 400, 606],
        ['/rosetta/v1/block/transaction', { network_identifier: network, block_identifier: {}, transaction_identifier: { hash: '0x' + '11'.repeat(32) } }, 404, 607],
        ['/rosetta/v1/block/transaction', { network_identifier: network, block_identifier: {}, transaction_identifier: { hash: 'zz' } }, 400, 608],
        ['/rosetta/v1/mempool/transaction', { network_identifier: network, transaction_identifier: { hash: '0x' + '11'.repeat(32) } }, 400, 607],
        ['/rosetta/v1/account/balance', { network_identifier: network, account_identifier: { address: 'notanaddress' } }, 400, 601],
        ['/rosetta/v1/account/balance', { network_identifier: network, account_identifier: { address: 'ST000000000000000000002AMW42H', sub_account: { address: 'x' } } }, 400, 641],
        ['/rosetta/v1/construction/hash', { network_identifier: network, signed_transaction: 'zz' }, 400, 628],
      ];
      for (const [path, body, status, code] of cases) {
        const r = await post(svc, path, body);
        expect([path, body, r.status, r.body?.code]).toEqual([path, body, status, code]);
        expect(typeof r.body.message).toBe('string');
        expect(typeof r.body.retriable).toBe('boolean');
      }
      const nf = await post(svc, '/rosetta/v1/nonexistent', { network_identifier: network });
      expect(nf.status).toBe(404);
      expect(nf.body.message).toBe('POST /rosetta/v1/nonexistent not found');
      const list = await fetch(svc.api + '/rosetta/v1/network/list');
      expect(list.status).toBe(404);
      expect((await post(svc, '/rosetta/v1/network/list', {})).body).toEqual({ network_identifiers: [network] });
      // no node configured: network/status cannot be answered
      expect((await post(svc, '/rosetta/v1/network/status', { network_identifier: network })).status).toBe(503);
    });

    it('hostile bodies on every Rosetta route: a Rosetta error object, never a 5xx', async () => {
      const paths = ['network/list', 'network/options', 'network/status', 'block', 'block/transaction', 'mempool', 'mempool/transaction', 'account/balance',
        'construction/derive', 'construction/preprocess', 'construction/metadata', 'construction/payloads', 'construction/combine', 'construction/parse',
        'construction/hash', 'construction/submit'];
      const n = network;
      const op = (o: object) => ({ operation_identifier: { index: 0 }, type: 'token_transfer', ...o });
      const bodies: unknown[] = [
        'null', '[]', '"x"', '1', '{"a":', '',
        { network_identifier: null }, { network_identifier: [] }, { network_identifier: { blockchain: 1, network: 2 } },
        { network_identifier: n, block_identifier: { index: 'x', hash: 5 } }, { network_identifier: n, block_identifier: { index: 1e300 } },
        { network_identifier: n, block_identifier: { hash: '0x' + 'zz'.repeat(32) }, transaction_identifier: { hash: '0x' } },
        { network_identifier: n, account_identifier: { address: 'SP' + 'Z'.repeat(200) }, block_identifier: { hash: 'ab' } },
        { network_identifier: n, public_key: { hex_bytes: '04' + '00'.repeat(64), curve_type: 'secp256k1' } },
        { network_identifier: n, operations: [op({ amount: { value: 'abc', currency: { symbol: 'STX', decimals: 6 } } })] },
        { network_identifier: n, operations: [op({ amount: { value: '-1', currency: { symbol: 'STX', decimals: 6 } } }), op({ account: { address: 'bad' }, amount: { value: '1', currency: { symbol: 'STX', decimals: 6 } } })] },
        { network_identifier: n, operations: [op({ type: 'fee', amount: { value: 'x', currency: { symbol: 'STX', decimals: 6 } } })], metadata: { account_sequence: 'x' }, public_keys: [{ hex_bytes: 'zz', curve_type: 'secp256k1' }] },
        { network_identifier: n, options: { symbol: 'STX', size: 1, type: 'token_transfer', decimals: 6, token_transfer_recipient_address: 'x', sender_address: 'y' } },
        { network_identifier: n, unsigned_transaction: '0x00', signatures: [{ signing_payload: { hex_bytes: 'x' }, public_key: { hex_bytes: 'x', curve_type: 'secp256k1' }, signature_type: 'ecdsa', hex_bytes: 'x' }] },
        { network_identifier: n, signed: true, transaction: '0x' + 'ff'.repeat(300) },
        { network_identifier: n, signed_transaction: '0x8080000000' },
        { network_identifier: n, operations: [op({ amount: { value: '1' } }), op({ type: 'stack_stx', amount: { value: '-1', currency: null }, metadata: { number_of_cycles: 'x' } })] },
        { network_identifier: n, operations: [op({ type: 'delegate_stx', account: { address: 'x' }, amount: { value: '-5', currency: { symbol: 'STX', decimals: 6 } }, metadata: { delegate_to: 'nope' } })], metadata: { account_sequence: 1, contract_address: 'x', contract_name: 'y' }, public_keys: [{ hex_bytes: '02' + '11'.repeat(32), curve_type: 'secp256k1' }] },
      ];
      const bad: string[] = [];
      for (const p of paths) {
        for (const b of bodies) {
          const res = await fetch(svc.api + '/rosetta/v1/' + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof b === 'string' ? b : JSON.stringify(b) });
          const text = await res.text();
          let body: Json | null = null;
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          const ok = res.status === 200 || (res.status >= 400 && res.status < 500 && body && (typeof body.code === 'number' || typeof body.message === 'string')) || (res.status === 503 && p.endsWith('status'));
          if (!ok) bad.push(`${p} ${typeof b === 'string' ? b : JSON.stringify(b).slice(0, 80)} → ${res.status} ${text.slice(0, 120)}`);
        }
      }
      expect(bad).toEqual([]);
    });

    it("every block's operations move the STX the /extended answers show (fees, transfers, mints, burns)", async () => {
      const tip = (await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: {} })).body.block.block_identifier.index as number;
      for (let h = 2; h <= tip; h++) {
        const { block } = (await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: { index: h } })).body;
        for (const t of block.transactions as Json[]) {
          const id = t.transaction_identifier.hash as string;
          const ext = await getOk(svc, `/extended/v1/tx/${id}`);
          const ops = t.operations as Json[];
          const sum = (type: string, sign: 1 | -1) =>
            ops.filter((o) => o.type === type && o.amount?.currency.symbol === 'STX' && Math.sign(Number(o.amount.value)) === sign).reduce((a, o) => a + BigInt(o.amount.value), 0n);
          const fee = ops.find((o) => o.type === 'fee');
          if (ext.tx_type !== 'coinbase' && ext.tx_type !== 'tenure_change') expect(BigInt(fee!.amount.value)).toBe(-BigInt(ext.fee_rate));
          const stx = (ext.events as Json[]).filter((e) => e.event_type === 'stx_asset');
          const moved = (kind: string) => stx.filter((e) => e.asset.asset_event_type === kind).reduce((a, e) => a + BigInt(e.asset.amount), 0n);
          expect([id, sum('token_transfer', 1)]).toEqual([id, moved('transfer')]);
          expect([id, sum('token_transfer', -1)]).toEqual([id, -moved('transfer')]);
          expect([id, sum('mint', 1)]).toEqual([id, moved('mint')]);
          expect([id, sum('burn', -1)]).toEqual([id, -moved('burn')]);
          const locks = (ext.events as Json[]).filter((e) => e.event_type === 'stx_lock').reduce((a, e) => a + BigInt(e.stx_lock_event.locked_amount), 0n);
          expect([id, sum('stx_lock', -1)]).toEqual([id, -locks]);
        }
      }
    }, 300_000);

    it('reconciliation: the ledger of every operation from block 1 equals /account/balance at each block', async () => {
      expect(await reconcile(svc, network)).toEqual([]);
    }, 300_000);

    it("construction/hash and /parse of every mined tx: its id and operations, except what the reference can't read or list", async () => {
      const rows = await svc.db.sql<{ tx_id: string; raw_tx: string; tx_type: string; nakamoto_coinbase: boolean; boot: boolean }[]>`
        SELECT DISTINCT ON (tx_id) tx_id, raw_tx, api->>'tx_type' AS tx_type,
          (api->>'tx_type' = 'coinbase' AND api->'coinbase_payload'->>'vrf_proof' IS NOT NULL) AS nakamoto_coinbase,
          sender_address IN ('SP000000000000000000002Q6VF78', 'ST000000000000000000002AMW42H') AS boot
        FROM txs WHERE canonical AND microblock_canonical ORDER BY tx_id`;
      expect(rows.length).toBeGreaterThan(0);
      const bad: string[] = [];
      for (const r of rows) {
        const hashBody = { network_identifier: network, signed_transaction: r.raw_tx };
        const parseBody = { network_identifier: network, signed: true, transaction: r.raw_tx };
        const hash = await post(svc, '/rosetta/v1/construction/hash', hashBody);
        const parse = await post(svc, '/rosetta/v1/construction/parse', parseBody);
        const answer = (x: { status: number; body: Json }) => (x.status === 200 ? 200 : x.status === 413 ? 413 : x.body.code);
        // tenure changes and Nakamoto coinbases: payload types 7 and 8, which 6.11.3 does not know
        const unreadable = r.tx_type === 'tenure_change' || r.nakamoto_coinbase;
        // a body over 100 kB (a big contract): express.json()'s limit at the reference; the boot txs are unsigned
        const tooBig = (b: unknown) => Buffer.byteLength(JSON.stringify(b)) > 100 * 1024;
        const wantHash = tooBig(hashBody) ? 413 : unreadable ? 628 : r.boot ? 629 : 200;
        if (answer(hash) !== wantHash || (wantHash === 200 && hash.body.transaction_identifier.hash !== r.tx_id)) bad.push(`hash ${r.tx_id} (${r.tx_type}): ${JSON.stringify(hash.body)}`);
        // a contract call: the reference builds its operation from a stored call the parsed tx does not carry (612)
        const wantParse = tooBig(parseBody) ? 413 : unreadable ? 628 : r.boot ? 609 : r.tx_type === 'contract_call' ? 612 : 200;
        if (answer(parse) !== wantParse) bad.push(`parse ${r.tx_id} (${r.tx_type}): ${parse.status} ${JSON.stringify(parse.body).slice(0, 120)}`);
      }
      expect(bad).toEqual([]);
    }, 300_000);

    it('mempool/transaction: a contract call never mined cannot be listed (612); the mempool lists what /extended/v1/tx/mempool lists', async () => {
      const calls = await svc.db.sql<{ tx_id: string }[]>`
        SELECT tx_id FROM mempool_txs m WHERE NOT pruned AND api->>'tx_type' = 'contract_call'
          AND NOT EXISTS (SELECT 1 FROM txs t WHERE t.tx_id = m.tx_id)`;
      for (const c of calls) {
        const r = await post(svc, '/rosetta/v1/mempool/transaction', { network_identifier: network, transaction_identifier: { hash: c.tx_id } });
        expect([c.tx_id, r.status, r.body.code]).toEqual([c.tx_id, 400, 612]);
      }
      const ids = (await post(svc, '/rosetta/v1/mempool', { network_identifier: network })).body.transaction_identifiers.map((t: Json) => t.hash);
      const ext = await getOk(svc, '/extended/v1/tx/mempool?limit=50');
      expect(ext.total).toBeLessThanOrEqual(50);
      expect([...ids].sort()).toEqual((ext.results as Json[]).map((t) => t.tx_id).sort());
    });
  });
}

describe('miner rewards: two for one recipient from one block (sql/0060_miner_reward_index.sql)', () => {
  let svc: TestService;
  const network = { blockchain: 'stacks', network: 'mainnet' };
  beforeAll(async () => {
    svc = await startTestService({ STACKS_CHAIN_ID: 'mainnet' }, { fixture: 'mainnet-reorg-scenario2' });
  }, 300_000);
  afterAll(async () => svc?.stop());

  const state = async () => ({
    rewards: await svc.db.sql`SELECT * FROM miner_rewards ORDER BY index_block_hash, from_index_block_hash, recipient, reward_index`,
    totals: await svc.db.sql`SELECT principal, rewards::text FROM stx_totals ORDER BY principal`,
  });

  it('both are stored and listed (the coinbase then the microblock-fee share, newest first as the reference lists them)', async () => {
    const r = await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: { index: 1 } });
    const ops = (r.body.block.transactions[0].operations as Json[]).filter((o) => o.type === 'miner_reward');
    expect(ops.map((o) => o.amount.value)).toEqual(['360', '1000001116']);
  });

  it('a database ingested before the migration gets the dropped rewards back, with their totals', async () => {
    const expected = await state();
    expect(expected.rewards.some((x) => x.reward_index > 0)).toBe(true);
    // the state before: the second rewards missing, their amounts not in the totals
    await svc.db.sql`
      UPDATE stx_totals t SET rewards = t.rewards - d.amount FROM (
        SELECT recipient, SUM(coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced) AS amount
        FROM miner_rewards WHERE reward_index > 0 AND canonical GROUP BY recipient) d
      WHERE t.principal = d.recipient`;
    await svc.db.sql`DELETE FROM miner_rewards WHERE reward_index > 0`;
    await svc.db.sql`DELETE FROM schema_migrations WHERE version = '0060_miner_reward_index.sql'`;
    await migrate(svc.db.sql);
    expect(await state()).toEqual(expected);
  });
});

describe('rosetta construction round trip and the node-backed routes (a stand-in node)', () => {
  let svc: TestService;
  let node: import('node:http').Server;
  const network = { blockchain: 'stacks', network: 'testnet' };
  const submitted: Buffer[] = [];
  beforeAll(async () => {
    const http = await import('node:http');
    node = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        };
        if (req.url === '/v2/info') return send(200, { stacks_tip_height: 28, burn_block_height: 130 });
        if (req.url === '/v2/neighbors') return send(200, { inbound: [{ public_key_hash: 'aa' }], outbound: [{ public_key_hash: 'aa' }, { public_key_hash: 'bb' }] });
        if (req.url?.startsWith('/v2/accounts/')) return send(200, { nonce: 7, balance: '0x0' });
        if (req.url === '/v2/fees/transaction') {
          const b = JSON.parse(Buffer.concat(chunks).toString()) as { transaction_payload: string };
          // a payload, not a whole transaction: a token transfer payload starts with type 0x00, a contract call with 0x02
          if (!/^0x0[02]/.test(b.transaction_payload)) return send(400, { error: 'bad payload' });
          return send(200, { estimations: [{ fee: 100 }, { fee: 180 }, { fee: 300 }] });
        }
        if (req.url === '/v2/pox') return send(200, { contract_id: 'ST000000000000000000002AMW42H.pox-4', current_burnchain_block_height: 140, current_cycle: { id: 7 } });
        if (req.url === '/v2/transactions' && req.method === 'POST') {
          submitted.push(Buffer.concat(chunks));
          return send(200, '0x' + 'ab'.repeat(32));
        }
        send(404, { error: 'not found' });
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    const port = (node.address() as { port: number }).port;
    svc = await startTestService({ STACKS_CHAIN_ID: 'testnet', STACKS_NODE_RPC_URLS: `http://127.0.0.1:${port}` }, { fixture: 'mocknet' });
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
    node?.close();
  });

  it('network/status: tip, genesis, peers and sync from the node', async () => {
    const r = await post(svc, '/rosetta/v1/network/status', { network_identifier: network });
    expect(r.status).toBe(200);
    expect(r.body.current_block_identifier.index).toBe(28);
    expect(r.body.genesis_block_identifier.index).toBe(1);
    expect(r.body.peers).toEqual([{ peer_id: 'aa' }, { peer_id: 'bb' }]);
    expect(r.body.sync_status).toEqual({ current_index: 28, target_index: 28, synced: true });
  });

  it('derive → preprocess → metadata → payloads → sign → combine → parse → hash → submit', async () => {
    const { randomPrivateKey, privateKeyToPublic, signMessageHashRsv } = await import('@stacks/transactions');
    const key = randomPrivateKey();
    const pub = privateKeyToPublic(key) as string;
    const sender = (await post(svc, '/rosetta/v1/construction/derive', { network_identifier: network, public_key: { hex_bytes: pub, curve_type: 'secp256k1' } })).body.account_identifier.address as string;
    expect(sender).toMatch(/^ST/);
    const recipient = 'STDE7Y8HV3RX8VBM2TZVWJTS7ZA1XB0SSC3NEVH0';
    const stx = { symbol: 'STX', decimals: 6 };
    const transfer = [
      { operation_identifier: { index: 0 }, type: 'token_transfer', account: { address: sender }, amount: { value: '-500000', currency: stx } },
      { operation_identifier: { index: 1 }, type: 'token_transfer', account: { address: recipient }, amount: { value: '500000', currency: stx } },
    ];
    const pre = await post(svc, '/rosetta/v1/construction/preprocess', { network_identifier: network, operations: transfer, metadata: {} });
    expect(pre.status).toBe(200);
    expect(pre.body.options).toMatchObject({ sender_address: sender, type: 'token_transfer', token_transfer_recipient_address: recipient, amount: '500000', size: 180 });
    const meta = await post(svc, '/rosetta/v1/construction/metadata', { network_identifier: network, options: pre.body.options });
    expect(meta.status).toBe(200);
    expect(meta.body.metadata.account_sequence).toBe(7);
    expect(meta.body.suggested_fee).toEqual([{ value: '180', currency: stx }]);
    const ops = [{ operation_identifier: { index: 0 }, type: 'fee', account: { address: sender }, amount: { value: '-180', currency: stx } }, ...transfer];
    const payloads = await post(svc, '/rosetta/v1/construction/payloads', {
      network_identifier: network,
      operations: ops,
      metadata: { account_sequence: 7 },
      public_keys: [{ hex_bytes: pub, curve_type: 'secp256k1' }],
    });
    expect(payloads.status).toBe(200);
    const payload = payloads.body.payloads[0];
    expect(payload.address).toBe(sender);
    // Rosetta signatures are r || s || v
    const rsv = signMessageHashRsv({ messageHash: payload.hex_bytes, privateKey: key });
    const combine = await post(svc, '/rosetta/v1/construction/combine', {
      network_identifier: network,
      unsigned_transaction: payloads.body.unsigned_transaction,
      signatures: [{ signing_payload: { hex_bytes: payload.hex_bytes, signature_type: 'ecdsa_recovery' }, public_key: { hex_bytes: pub, curve_type: 'secp256k1' }, signature_type: 'ecdsa_recovery', hex_bytes: rsv }],
    });
    expect(combine.status).toBe(200);
    const signed = combine.body.signed_transaction as string;
    const parsed = await post(svc, '/rosetta/v1/construction/parse', { network_identifier: network, signed: true, transaction: signed });
    expect(parsed.status).toBe(200);
    expect((parsed.body.operations as Json[]).map((o) => [o.type, o.account.address, o.amount.value])).toEqual([
      ['fee', sender, '-180'],
      ['token_transfer', sender, '-500000'],
      ['token_transfer', recipient, '500000'],
    ]);
    expect(parsed.body.account_identifier_signers).toEqual([{ address: sender }]);
    // unsigned: signed=false matches, signed=true does not
    expect((await post(svc, '/rosetta/v1/construction/parse', { network_identifier: network, signed: false, transaction: payloads.body.unsigned_transaction })).status).toBe(200);
    expect((await post(svc, '/rosetta/v1/construction/parse', { network_identifier: network, signed: true, transaction: payloads.body.unsigned_transaction })).body.code).toBe(609);
    const hash = await post(svc, '/rosetta/v1/construction/hash', { network_identifier: network, signed_transaction: signed });
    expect(hash.body.transaction_identifier.hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await post(svc, '/rosetta/v1/construction/hash', { network_identifier: network, signed_transaction: payloads.body.unsigned_transaction })).body.code).toBe(629);
    // a signature by another key is refused
    const other = signMessageHashRsv({ messageHash: payload.hex_bytes, privateKey: randomPrivateKey() });
    const bad = await post(svc, '/rosetta/v1/construction/combine', {
      network_identifier: network,
      unsigned_transaction: payloads.body.unsigned_transaction,
      signatures: [{ signing_payload: { hex_bytes: payload.hex_bytes }, public_key: { hex_bytes: pub, curve_type: 'secp256k1' }, signature_type: 'ecdsa_recovery', hex_bytes: other }],
    });
    expect(bad.body.code).toBe(635);
    // stack_stx (pox-4): preprocess and metadata read the PoX contract and cycle from the node; payloads builds the call
    const stackOps = [
      { operation_identifier: { index: 0 }, type: 'stack_stx', account: { address: sender }, amount: { value: '-1000000', currency: stx }, metadata: { number_of_cycles: 2, pox_addr: 'mk4zAE1iVWf5PJAgeX83rSXnzF5zQBiqf1', signer_key: '02' + '11'.repeat(32) } },
    ];
    const spre = await post(svc, '/rosetta/v1/construction/preprocess', { network_identifier: network, operations: stackOps });
    expect(spre.status).toBe(200);
    expect(spre.body.options).toMatchObject({ type: 'stack_stx', number_of_cycles: 2, amount: '1000000' });
    const smeta = await post(svc, '/rosetta/v1/construction/metadata', { network_identifier: network, options: spre.body.options });
    expect(smeta.status).toBe(200);
    expect(smeta.body.metadata).toMatchObject({ contract_address: 'ST000000000000000000002AMW42H', contract_name: 'pox-4', burn_block_height: 140, reward_cycle_id: 7 });
    const spay = await post(svc, '/rosetta/v1/construction/payloads', {
      network_identifier: network,
      operations: [{ operation_identifier: { index: 0 }, type: 'fee', account: { address: sender }, amount: { value: '-300', currency: stx } }, ...stackOps],
      metadata: smeta.body.metadata,
      public_keys: [{ hex_bytes: pub, curve_type: 'secp256k1' }],
    });
    expect(spay.status).toBe(200);
    // the call's arguments are what the operations asked for
    const call = deserializeTransaction(spay.body.unsigned_transaction).payload as unknown as { functionName: { content: string }; functionArgs: { value: unknown }[] };
    expect(call.functionName.content).toBe('stack-stx');
    expect([call.functionArgs[0].value, call.functionArgs[2].value, call.functionArgs[3].value].map(String)).toEqual(['1000000', '140', '2']);
    // parse cannot list a contract call's operations at the reference (it reads them from a stored call): 612 here too
    const sparsed = await post(svc, '/rosetta/v1/construction/parse', { network_identifier: network, signed: false, transaction: spay.body.unsigned_transaction });
    expect([sparsed.status, sparsed.body.code]).toEqual([400, 612]);
    const submit = await post(svc, '/rosetta/v1/construction/submit', { network_identifier: network, signed_transaction: signed });
    expect({ status: submit.status, body: submit.body }).toEqual({ status: 200, body: { transaction_identifier: { hash: '0x' + 'ab'.repeat(32) } } });
    expect('0x' + submitted[0].toString('hex')).toBe(signed);
  });
});

/** The symbol and decimals the stand-in node gives a token contract; undefined: it fails the read-only call. */
function stubFtMeta(contractName: string): { symbol: string; decimals: number } | undefined {
  if (contractName.endsWith('0')) return undefined;
  return { symbol: contractName.toUpperCase(), decimals: contractName.length % 7 };
}

/** A stand-in node answering get-symbol / get-decimals read-only calls (stubFtMeta); records the paths asked. */
async function startFtNode(calls: string[] = []): Promise<{ server: import('node:http').Server; url: string }> {
  const http = await import('node:http');
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      const m = /^\/v2\/contracts\/call-read\/[^/]+\/([^/]+)\/(get-symbol|get-decimals)$/.exec(req.url ?? '');
      const meta = m && stubFtMeta(m[1]);
      if (!m || !meta) return res.end(JSON.stringify({ okay: false, cause: 'no such function' }));
      const ascii = Buffer.from(meta.symbol);
      const len = Buffer.alloc(4);
      len.writeUInt32BE(ascii.length);
      // (ok "SYMBOL") and (ok uN)
      if (m[2] === 'get-symbol') return res.end(JSON.stringify({ okay: true, result: '0x070d' + len.toString('hex') + ascii.toString('hex') }));
      res.end(JSON.stringify({ okay: true, result: '0x0701' + meta.decimals.toString(16).padStart(32, '0') }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

/**
 * For every FT holder: /account/balance at the tip lists STX, then every token it moved (balance 0 included) whose
 * metadata the stand-in node gives, ordered by asset identifier as the reference orders them; the mismatches.
 */
async function ftListingMismatches(svc: TestService, network: { blockchain: string; network: string }): Promise<string[]> {
  const holders = await svc.db.sql<{ principal: string }[]>`SELECT DISTINCT principal FROM ft_balances`;
  expect(holders.length).toBeGreaterThan(0);
  const bad: string[] = [];
  for (const { principal } of holders) {
    const r = await post(svc, '/rosetta/v1/account/balance', { network_identifier: network, account_identifier: { address: principal } });
    // the tokens with a canonical event of the principal (a row only orphaned events made is not listed)
    const rows = await svc.db.sql<{ asset_identifier: string; balance: string }[]>`
      SELECT asset_identifier, balance::text FROM ft_balances f WHERE principal = ${principal}
        AND EXISTS (SELECT 1 FROM events e WHERE e.event_type = 'fungible_token_asset' AND e.asset_identifier = f.asset_identifier
          AND (e.sender = f.principal OR e.recipient = f.principal) AND e.canonical AND e.microblock_canonical AND e.index_block_hash <> '')`;
    const want = rows
      .sort((a, b) => a.asset_identifier.localeCompare(b.asset_identifier))
      .flatMap((f) => {
        const m = stubFtMeta(f.asset_identifier.split('::')[0].split('.')[1]);
        return m ? [{ value: f.balance, currency: m }] : [];
      });
    if (r.body.balances[0].currency.symbol !== 'STX' || JSON.stringify(r.body.balances.slice(1)) !== JSON.stringify(want)) {
      bad.push(`${principal}: ${JSON.stringify(r.body.balances)}, want STX then ${JSON.stringify(want)}`);
    }
  }
  return bad;
}

describe('rosetta FT operations: symbol and decimals from the node', () => {
  let svc: TestService;
  let node: import('node:http').Server;
  const calls: string[] = [];
  const network = { blockchain: 'stacks', network: 'mainnet' };
  beforeAll(async () => {
    const n = await startFtNode(calls);
    node = n.server;
    svc = await startTestService({ STACKS_CHAIN_ID: 'mainnet', STACKS_NODE_RPC_URLS: n.url }, { fixture: 'mainnet-reorg-scenario2' });
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
    node?.close();
  });

  it('FT mints and transfers are operations in the token currency, tagged token_type ft', async () => {
    const [ev] = await svc.db.sql<{ block_height: number; tx_id: string; asset_event_type: string; amount: string }[]>`
      SELECT block_height, tx_id, asset_event_type, amount::text FROM events
      WHERE event_type = 'fungible_token_asset' AND canonical AND microblock_canonical AND index_block_hash <> ''
        AND block_height > 1 ORDER BY block_height LIMIT 1`; // block 1 lists no event operations
    expect(ev).toBeDefined();
    const r = await post(svc, '/rosetta/v1/block', { network_identifier: { blockchain: 'stacks', network: 'mainnet' }, block_identifier: { index: ev.block_height } });
    const t = (r.body.block.transactions as Json[]).find((x) => x.transaction_identifier.hash === ev.tx_id)!;
    const [ev2] = await svc.db.sql<{ asset_identifier: string }[]>`SELECT asset_identifier FROM events WHERE tx_id = ${ev.tx_id} AND event_type = 'fungible_token_asset' LIMIT 1`;
    const meta = stubFtMeta(ev2.asset_identifier.split('::')[0].split('.')[1])!;
    const ft = (t.operations as Json[]).filter((o) => o.amount?.currency.symbol === meta.symbol);
    expect(ft.length).toBeGreaterThan(0);
    expect(ft.every((o) => o.amount.currency.decimals === meta.decimals && o.amount.metadata?.token_type === 'ft')).toBe(true);
    expect(calls.some((c) => c.includes('/v2/contracts/call-read/') && c.endsWith('/get-symbol'))).toBe(true);
  });

  it('account/balance lists every token the account moved, with the symbol and decimals the node gives, ordered by asset id', async () => {
    expect(await ftListingMismatches(svc, network)).toEqual([]);
  });

  it('reconciliation with token currencies: the ledger of every FT and STX operation equals /account/balance at each block', async () => {
    const { mismatches, ftChecks } = await reconcileAll(svc, network);
    expect(mismatches).toEqual([]);
    expect(ftChecks).toBeGreaterThan(0);
  }, 300_000);
});

describe('rosetta on a generated chain with forks and microblocks', () => {
  let svc: TestService;
  let node: import('node:http').Server;
  const network = { blockchain: 'stacks', network: 'testnet' };
  beforeAll(async () => {
    // a stand-in node gives the tokens' symbols and decimals (and fails them for some contracts: stubFtMeta)
    const n = await startFtNode();
    node = n.server;
    svc = await startTestService({ STACKS_CHAIN_ID: 'testnet', STACKS_NODE_RPC_URLS: n.url });
    const gen = new ChainGenerator({ blocks: 30, txsPerBlock: 6, seed: 'rosetta-forks', forks: true, forkEvery: 8, forkDepth: 2, microblockEvery: 5 });
    for await (const m of gen.messages()) expect(await postMessage(svc.observer, m)).toBe(200);
    await settled(svc.observer);
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
    node?.close();
  });

  it('the canonical blocks reconcile with /account/balance after every reorg, STX and token currencies', async () => {
    const { mismatches, ftChecks } = await reconcileAll(svc, network);
    expect(mismatches).toEqual([]);
    expect(ftChecks).toBeGreaterThan(0);
  }, 300_000);

  it('account/balance lists the tokens whose metadata the node gives (some it refuses), ordered by asset id', async () => {
    const refused = await svc.db.sql`SELECT 1 FROM ft_balances WHERE split_part(split_part(asset_identifier, '::', 1), '.', 2) LIKE '%0' LIMIT 1`;
    expect(refused.length).toBe(1);
    expect(await ftListingMismatches(svc, network)).toEqual([]);
  });

  /** Every principal's STX and FT balances and STX nonce at every canonical height, summed over its history. */
  const historySums = () => svc.db.sql<{ principal: string; asset_identifier: string; height: number; balance: string; nonce: string | null }[]>`
    WITH moves AS (
      SELECT recipient AS principal, 'stx' AS asset_identifier, block_height, amount AS delta, NULL::bigint AS nonce FROM events
        WHERE event_type = 'stx_asset' AND recipient IS NOT NULL AND canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT sender, 'stx', block_height, -amount, NULL FROM events
        WHERE event_type = 'stx_asset' AND sender IS NOT NULL AND canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT recipient, asset_identifier, block_height, amount, NULL FROM events
        WHERE event_type = 'fungible_token_asset' AND recipient IS NOT NULL AND canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT sender, asset_identifier, block_height, -amount, NULL FROM events
        WHERE event_type = 'fungible_token_asset' AND sender IS NOT NULL AND canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT CASE WHEN sponsored THEN sponsor_address ELSE sender_address END, 'stx', block_height, -fee_rate, nonce FROM txs
        WHERE canonical AND microblock_canonical AND index_block_hash <> ''
      UNION ALL SELECT recipient, 'stx', block_height, coinbase_amount + tx_fees_anchored + tx_fees_streamed_confirmed + tx_fees_streamed_produced, NULL
        FROM miner_rewards WHERE canonical
    ), keys AS (SELECT DISTINCT principal, asset_identifier FROM moves WHERE principal IS NOT NULL)
    SELECT k.principal, k.asset_identifier, b.block_height::int AS height,
      (SELECT COALESCE(SUM(delta), 0) FROM moves m WHERE m.principal = k.principal AND m.asset_identifier = k.asset_identifier AND m.block_height <= b.block_height)::text AS balance,
      (SELECT MAX(nonce) FROM moves m WHERE m.principal = k.principal AND m.asset_identifier = k.asset_identifier AND m.block_height <= b.block_height)::text AS nonce
    FROM keys k CROSS JOIN blocks b WHERE b.canonical
    ORDER BY 1, 2, 3`;
  const checkpointsAt = () => svc.db.sql<{ principal: string; asset_identifier: string; height: number; balance: string; nonce: string | null }[]>`
    SELECT k.principal, k.asset_identifier, b.block_height::int AS height,
      COALESCE(c.balance, 0)::text AS balance, c.nonce::text AS nonce
    FROM (SELECT DISTINCT principal, asset_identifier FROM balance_checkpoints WHERE canonical) k
    CROSS JOIN blocks b
    LEFT JOIN LATERAL (
      SELECT balance, nonce FROM balance_checkpoints p
      WHERE p.principal = k.principal AND p.asset_identifier = k.asset_identifier AND p.canonical AND p.block_height <= b.block_height
      ORDER BY p.block_height DESC LIMIT 1) c ON true
    WHERE b.canonical
    ORDER BY 1, 2, 3`;

  it('balance checkpoints (sql/0090): after every reorg, the balance and nonce at every height equal the summed history', async () => {
    const want = await historySums();
    expect(want.some((r) => r.asset_identifier !== 'stx')).toBe(true);
    expect(await checkpointsAt()).toEqual(want);
    // orphaned blocks lose their rows (sql/0100: a restored block gets them back from its ancestry), and the chain
    // did orphan blocks that had some
    const [orphaned] = await svc.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM blocks b WHERE NOT b.canonical AND b.block_height > 1
        AND EXISTS (SELECT 1 FROM txs t WHERE t.index_block_hash = b.index_block_hash)`;
    expect(orphaned.n).toBeGreaterThan(0);
    const [stray] = await svc.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM balance_checkpoints c LEFT JOIN blocks b USING (index_block_hash)
      WHERE b.canonical IS DISTINCT FROM true OR NOT c.canonical`;
    expect(stray.n).toBe(0);
  });

  it('balance checkpoints: a database ingested before the migration gets the same rows from what is stored', async () => {
    const rows = () => svc.db.sql`SELECT principal, asset_identifier, index_block_hash, block_height, balance::text, nonce FROM balance_checkpoints WHERE canonical ORDER BY 1, 2, 4`;
    const expected = await rows();
    expect(expected.length).toBeGreaterThan(0);
    await svc.db.sql`DELETE FROM balance_checkpoints`;
    await svc.db.sql`DELETE FROM schema_migrations WHERE version = '0090_balance_checkpoints.sql'`;
    await migrate(svc.db.sql);
    expect(await rows()).toEqual(expected);
  });

  it('orphaned blocks are found by hash (as the reference getBlock does), with no transactions; their height names the canonical block', async () => {
    const orphans = await svc.db.sql<{ block_hash: string; block_height: number; parent_block_hash: string }[]>`
      SELECT block_hash, block_height, parent_block_hash FROM blocks b WHERE NOT canonical AND block_height > 1
        AND NOT EXISTS (SELECT 1 FROM blocks c WHERE c.canonical AND c.block_hash = b.block_hash)`;
    expect(orphans.length).toBeGreaterThan(0);
    for (const o of orphans) {
      const byHash = await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: { hash: o.block_hash } });
      expect(byHash.status).toBe(200);
      expect(byHash.body.block.block_identifier).toEqual({ index: o.block_height, hash: o.block_hash });
      expect(byHash.body.block.parent_block_identifier.hash).toBe(o.parent_block_hash);
      expect(byHash.body.block.transactions).toEqual([]);
      const byHeight = await post(svc, '/rosetta/v1/block', { network_identifier: network, block_identifier: { index: o.block_height } });
      expect(byHeight.body.block.block_identifier.hash).not.toBe(o.block_hash);
      // the canonical block of that height, with its transactions
      const [c] = await svc.db.sql<{ block_hash: string; index_block_hash: string }[]>`
        SELECT block_hash, index_block_hash FROM blocks WHERE canonical AND block_height = ${o.block_height}`;
      expect(byHeight.body.block.block_identifier).toEqual({ index: o.block_height, hash: c.block_hash });
      const txIds = await svc.db.sql<{ tx_id: string }[]>`
        SELECT tx_id FROM txs WHERE index_block_hash = ${c.index_block_hash} AND canonical AND microblock_canonical ORDER BY tx_id`;
      expect(txIds.length).toBeGreaterThan(0);
      expect((byHeight.body.block.transactions as Json[]).map((t) => t.transaction_identifier.hash).sort()).toEqual(txIds.map((t) => t.tx_id));
    }
  });
});

describe('rosetta network without STACKS_CHAIN_ID: the database adopts the network of its first transaction', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ STACKS_CHAIN_ID: '' });
  }, 300_000);
  afterAll(async () => svc?.stop());

  it('lists both networks while empty, then the adopted one; the other is refused', async () => {
    expect(svc.service.pipeline?.chainId).toBeUndefined();
    const empty = await post(svc, '/rosetta/v1/network/list', {});
    expect(empty.body.network_identifiers.map((n: Json) => n.network)).toEqual(['mainnet', 'testnet']);
    await replay(svc.observer, readFixture('mocknet'));
    const after = await post(svc, '/rosetta/v1/network/list', {});
    expect(after.body).toEqual({ network_identifiers: [{ blockchain: 'stacks', network: 'testnet' }] });
    const wrong = await post(svc, '/rosetta/v1/block', { network_identifier: { blockchain: 'stacks', network: 'mainnet' }, block_identifier: {} });
    expect(wrong.body.code).toBe(610);
  }, 300_000);
});
