// Burnchain-operation txs (raw_tx 0x00): the Stacks tx the reference rebuilds for them, and the observer schema for
// the node's burnchain_op objects. Payload shapes follow stacks-core's blockstack_op_to_json and the example values
// documented in the reference's core-node-message.ts.
import { describe, expect, it } from 'vitest';
import { burnchainOpTx, isBurnchainOpRawTx, type BurnOpNodeEvent } from '../../src/chain/burnchain-op.js';
import { btcAddressPoxTuple, cv, poxAddrTuple, stacksAddressPoxTuple } from '../../src/chain/pox.js';
import { clarityValue } from '../../src/chain/clarity.js';
import { codec } from '../../src/chain/native.js';
import { blockUpdate } from '../../src/observer/to-update.js';
import { validateObserverMessage, type NewBlockMessage } from '../../src/observer/schemas.js';
import { readFixture } from '../helpers/fixtures.js';
import { poxPrint } from '../helpers/pox-print.js';

const TXID = '0x' + 'e5d9aa62315aadfe670a0180fa3687852830f50152461bfd393a1298add88842';
const SENDER = { address: 'ST1Z7V02CJRY3G5R2RDG7SFAZA8VGH0Y44NC2NAJN', address_hash_bytes: '0x7e7d804c963c381702c3607cbd5f52370883c425', address_version: 26 };
const DELEGATE = { address: 'ST11NJTTKGVT6D1HY4NJRVQWMQM7TVAR091EJ8P2Y', address_hash_bytes: '0x43596b5386f466863e25658ddf94bd0fadab0048', address_version: 26 };
const TAPROOT = 'tb1pf4x64urhdsdmadxxhv2wwjv6e3evy59auu2xaauu3vz3adxtskfschm453';
const SIGNER_KEY = '033b67384665cbc3a36052a2d1c739a6cd1222cd451c499400c9d42e2041a56161';

const STACK_STX_OP = {
  stack_stx: {
    auth_id: 123456789,
    burn_block_height: 121,
    burn_header_hash: '71b87d20a688d5a23dc2915cd0cff2dd019f81801717a230caf58ee5fae6faf0',
    burn_txid: TXID.slice(2),
    max_amount: 4500432000000000,
    num_cycles: 6,
    reward_addr: TAPROOT,
    sender: SENDER,
    signer_key: SIGNER_KEY,
    stacked_ustx: 4500432000000000,
    vtxindex: 3,
  },
};

function ev(type: string, body: Record<string, unknown>, txid = TXID, index = 0): BurnOpNodeEvent {
  return { txid, event_index: index, committed: true, type, [type]: body };
}

/** (ok (tuple (lock-amount uN) (stacker P) (unlock-burn-height uM))) */
function stackResult(amount: bigint, stacker: string, unlock: bigint): string {
  return '0x07' + cv.tuple({ 'lock-amount': cv.uint(amount), stacker: cv.principal(stacker), 'unlock-burn-height': cv.uint(unlock) }).slice(2);
}

describe('isBurnchainOpRawTx', () => {
  it('recognises the node marker only', () => {
    expect(isBurnchainOpRawTx('0x00')).toBe(true);
    expect(isBurnchainOpRawTx('0x')).toBe(false);
    expect(isBurnchainOpRawTx('0x0001')).toBe(false);
    expect(isBurnchainOpRawTx('0x0000')).toBe(false);
  });
});

describe('burnchainOpTx', () => {
  it('transfer_stx with its STX transfer event → token_transfer from the event, fee 0, nonce 0', () => {
    const op = {
      transfer_stx: {
        burn_block_height: 121,
        burn_header_hash: 'aa'.repeat(32),
        memo: '0x00010203',
        recipient: DELEGATE,
        sender: SENDER,
        transfered_ustx: 777,
        burn_txid: TXID.slice(2),
        vtxindex: 2,
      },
    };
    const events = [
      ev('stx_transfer_event', { sender: SENDER.address, recipient: DELEGATE.address, amount: '777', memo: '' }),
      ev('stx_mint_event', { recipient: SENDER.address, amount: '5' }, '0x' + '11'.repeat(32)),
    ];
    const d = burnchainOpTx({ txid: TXID.toUpperCase().replace('0X', '0x'), raw_result: '0x0703', burnchain_op: op, burnBlockHeight: 121, events })!;
    expect(d).not.toBeNull();
    expect(d.txId).toBe(TXID);
    expect(d.rawTx).toBe('0x00');
    expect(d.txType).toBe('token_transfer');
    expect(d.senderAddress).toBe(SENDER.address);
    expect(d.tokenTransferRecipient).toBe(DELEGATE.address);
    expect(d.tokenTransferAmount).toBe('777');
    expect(d.api).toEqual({
      tx_id: TXID,
      nonce: 0,
      fee_rate: '0',
      sender_address: SENDER.address,
      sponsored: false,
      post_condition_mode: 'allow',
      post_conditions: [],
      anchor_mode: 'any',
      tx_type: 'token_transfer',
      // the reference puts an empty memo, not the op's memo
      token_transfer: { recipient_address: DELEGATE.address, amount: '777', memo: '0x' },
    });
  });

  it('pox-4 stack_stx op → contract_call pox-4 stack-stx with the op’s 8 arguments', () => {
    const events = [ev('stx_lock_event', { locked_amount: '4500432000000000', unlock_height: '200', locked_address: SENDER.address, contract_identifier: 'ST000000000000000000002AMW42H.pox-4' })];
    const d = burnchainOpTx({ txid: TXID, raw_result: stackResult(4500432000000000n, SENDER.address, 200n), burnchain_op: STACK_STX_OP, burnBlockHeight: 121, events })!;
    expect(d.txType).toBe('contract_call');
    expect(d.contractCallContractId).toBe('ST000000000000000000002AMW42H.pox-4');
    expect(d.contractCallFunctionName).toBe('stack-stx');
    expect(d.senderAddress).toBe(SENDER.address);
    const args = d.api.contract_call!.function_args!;
    expect(args.map((a) => a.repr)).toEqual([
      'u4500432000000000',
      expect.stringMatching(/^\(tuple \(hashbytes 0x[0-9a-f]{64}\) \(version 0x06\)\)$/),
      'u121',
      'u6',
      'none',
      `0x${SIGNER_KEY}`,
      'u4500432000000000',
      'u123456789',
    ]);
    expect(args[5].type).toBe('(buff 33)');
    expect(d.api.fee_rate).toBe('0');
    expect(d.api.anchor_mode).toBe('any');
  });

  it('stack-stx via an STX lock event (pre pox-4): amount and unlock from the result, lock period by cycle length', () => {
    const stacker = SENDER.address;
    const events = [ev('stx_lock_event', { locked_amount: '1', unlock_height: '9', locked_address: stacker, contract_identifier: 'ST000000000000000000002AMW42H.pox-3' })];
    const d = burnchainOpTx({ txid: TXID, raw_result: stackResult(5000n, stacker, 271n), burnchain_op: null, burnBlockHeight: 121, events })!;
    expect(d.contractCallContractId).toBe('ST000000000000000000002AMW42H.pox-3');
    const args = d.api.contract_call!.function_args!;
    expect(args.map((a) => a.hex)).toEqual([cv.uint(5000n), stacksAddressPoxTuple(stacker), cv.uint(121n), cv.uint(3n)]); // (271-121)/50
    // no contract id on the lock event (pox-1) → "pox"
    const d1 = burnchainOpTx({
      txid: TXID,
      raw_result: stackResult(5000n, stacker, 271n),
      burnBlockHeight: 121,
      events: [ev('stx_lock_event', { locked_amount: '1', unlock_height: '9', locked_address: stacker })],
    })!;
    expect(d1.contractCallContractId).toBe('ST000000000000000000002AMW42H.pox');
  });

  it('stack-stx via a lock event takes the pox-addr of the pox stack-stx print event', () => {
    const addr = poxAddrTuple(4, 'ab'.repeat(20));
    const print = poxPrint('stack-stx', SENDER.address, {
      'lock-amount': cv.uint(5000n),
      'lock-period': cv.uint(1n),
      'pox-addr': addr,
      'start-burn-height': cv.uint(121n),
      'unlock-burn-height': cv.uint(171n),
    });
    const events = [
      ev('contract_event', { contract_identifier: 'ST000000000000000000002AMW42H.pox-3', topic: 'print', raw_value: print, value: null }, TXID, 0),
      ev('stx_lock_event', { locked_amount: '5000', unlock_height: '171', locked_address: SENDER.address, contract_identifier: 'ST000000000000000000002AMW42H.pox-3' }, TXID, 1),
    ];
    const d = burnchainOpTx({ txid: TXID, raw_result: stackResult(5000n, SENDER.address, 171n), burnBlockHeight: 121, events })!;
    expect(d.api.contract_call!.function_args![1].hex).toBe(addr);
  });

  it('delegate_stx op on pox-4 → delegate-stx with until-burn-ht and pox-addr as some', () => {
    const print = poxPrint('delegate-stx', SENDER.address, {
      'amount-ustx': cv.uint(4500432000000000n),
      'delegate-to': cv.principal(DELEGATE.address),
      'end-cycle-id': cv.some(cv.uint(9n)),
      'pox-addr': cv.none(),
      'start-cycle-id': cv.uint(3n),
      'unlock-burn-height': cv.some(cv.uint(200n)),
    });
    const op = {
      delegate_stx: {
        burn_block_height: 121,
        burn_header_hash: '54feff1b7edc52311de1f4a54ccc0cf786274cdd2e2ca95ab73569a622f43e35',
        burn_txid: TXID.slice(2),
        delegate_to: DELEGATE,
        delegated_ustx: 4500432000000000,
        reward_addr: [1, TAPROOT],
        sender: SENDER,
        until_burn_height: 200,
        vtxindex: 3,
      },
    };
    const events = [ev('contract_event', { contract_identifier: 'ST000000000000000000002AMW42H.pox-4', topic: 'print', raw_value: print, value: null })];
    const d = burnchainOpTx({ txid: TXID, raw_result: '0x0703', burnchain_op: op, burnBlockHeight: 121, events })!;
    expect(d.contractCallContractId).toBe('ST000000000000000000002AMW42H.pox-4');
    expect(d.contractCallFunctionName).toBe('delegate-stx');
    const reprs = d.api.contract_call!.function_args!.map((a) => a.repr);
    expect(reprs.slice(0, 3)).toEqual(['u4500432000000000', `'${DELEGATE.address}`, '(some u200)']);
    expect(reprs[3]).toMatch(/^\(some \(tuple \(hashbytes 0x[0-9a-f]{64}\) \(version 0x06\)\)\)$/);

    // pox-3 (no op needed): from the print event, none for the absent pox-addr
    const events3 = [ev('contract_event', { contract_identifier: 'ST000000000000000000002AMW42H.pox-3', topic: 'print', raw_value: print, value: null })];
    const d3 = burnchainOpTx({ txid: TXID, raw_result: '0x0703', burnBlockHeight: 121, events: events3 })!;
    expect(d3.contractCallContractId).toBe('ST000000000000000000002AMW42H.pox-3');
    expect(d3.senderAddress).toBe(SENDER.address);
    expect(d3.api.contract_call!.function_args!.map((a) => a.repr)).toEqual(['u4500432000000000', `'${DELEGATE.address}`, '(some u200)', 'none']);
  });

  it('no event for the tx → skipped (null), as the reference', () => {
    const other = [ev('stx_transfer_event', { sender: SENDER.address, recipient: DELEGATE.address, amount: '1' }, '0x' + '22'.repeat(32))];
    expect(burnchainOpTx({ txid: TXID, raw_result: '0x0703', burnchain_op: STACK_STX_OP, burnBlockHeight: 1, events: other })).toBeNull();
  });

  it('where the reference gives up, falls back on the op (vote_for_aggregate_key) or skips', () => {
    const print = '0x' + '0d00000003616263'; // "abc": not a pox event
    const events = [ev('contract_event', { contract_identifier: 'ST000000000000000000002AMW42H.signers-voting', topic: 'print', raw_value: print, value: null })];
    const vote = {
      vote_for_aggregate_key: { aggregate_key: '02' + 'cd'.repeat(32), round: 1, reward_cycle: 7, sender: SENDER, signer_index: 4, signer_key: '03' + 'ef'.repeat(32) },
    };
    const d = burnchainOpTx({ txid: TXID, raw_result: '0x0703', burnchain_op: vote, burnBlockHeight: 1, events })!;
    expect(d.contractCallContractId).toBe('ST000000000000000000002AMW42H.signers-voting');
    expect(d.api.contract_call!.function_args!.map((a) => a.repr)).toEqual(['u4', `0x02${'cd'.repeat(32)}`, 'u1', 'u7']);
    expect(burnchainOpTx({ txid: TXID, raw_result: '0x0703', burnchain_op: null, burnBlockHeight: 1, events })).toBeNull();
  });
});

/** Independent BIP-173 encoder (bech32, witness v0) for the test. */
function bech32Encode(hrp: string, version: number, programHex: string): string {
  const CH = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  const words: number[] = [version];
  let acc = 0, bits = 0;
  for (const byte of Buffer.from(programHex, 'hex')) {
    acc = (acc << 8) | byte; bits += 8;
    while (bits >= 5) { bits -= 5; words.push((acc >> bits) & 31); }
  }
  if (bits) words.push((acc << (5 - bits)) & 31);
  const GEN = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  const polymod = (vs: number[]) => { let c = 1; for (const v of vs) { const t = c >>> 25; c = ((c & 0x1ffffff) << 5) ^ v; for (let i = 0; i < 5; i++) if ((t >>> i) & 1) c ^= GEN[i]; } return c >>> 0; };
  const exp = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const mod = polymod([...exp, ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const check = [0, 1, 2, 3, 4, 5].map((i) => (mod >>> (5 * (5 - i))) & 31);
  return hrp + '1' + [...words, ...check].map((w) => CH[w]).join('');
}

describe('BTC address → PoX tuple', () => {
  it('base58 p2pkh/p2sh round-trip with the codec’s stacks↔bitcoin conversion', () => {
    for (const stx of [SENDER.address, 'SP2W78BS5NX7X4ES4N09J4FHC4GND25W8X96Q0H03']) {
      const btc = codec.stacksToBitcoinAddress(stx);
      const [, hash] = codec.decodeStacksAddress(stx);
      expect(btcAddressPoxTuple(btc)).toBe(poxAddrTuple(0, hash));
      expect(stacksAddressPoxTuple(stx)).toBe(poxAddrTuple(0, hash));
    }
  });
  it('bech32 p2wsh (BIP-173 vector), p2wpkh (encoded here) and bech32m taproot', () => {
    expect(btcAddressPoxTuple('tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7')).toBe(
      poxAddrTuple(5, '1863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262'),
    );
    expect(btcAddressPoxTuple(bech32Encode('bcrt', 0, '751e76e8199196d454941c45d1b3a323f1433bd6'))).toBe(
      poxAddrTuple(4, '751e76e8199196d454941c45d1b3a323f1433bd6'),
    );
    const t = btcAddressPoxTuple(TAPROOT)!;
    expect(clarityValue(t).repr).toMatch(/\(version 0x06\)/);
    expect(btcAddressPoxTuple(TAPROOT.slice(0, -1) + 'q')).toBeNull(); // bad checksum
    expect(btcAddressPoxTuple('nonsense')).toBeNull();
  });
});

describe('observer schema and to-update with a burnchain-op tx', () => {
  // a real fixture block, plus a transfer-stx burnchain op tx as a Nakamoto node sends it
  const base = JSON.parse(
    readFixture('regtest-env-pox-4-stack-stx-in-reward-phase-S1').filter((l) => l.path === '/new_block').at(-1)!.body,
  ) as NewBlockMessage;
  const burnTx = {
    txid: TXID,
    tx_index: base.transactions.length,
    status: 'success',
    raw_result: '0x0703',
    raw_tx: '0x00',
    contract_interface: null,
    burnchain_op: {
      transfer_stx: { burn_block_height: 110, burn_header_hash: 'bb'.repeat(32), memo: '0x', recipient: DELEGATE, sender: SENDER, transfered_ustx: 777, burn_txid: TXID.slice(2), vtxindex: 1 },
    },
    execution_cost: { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 },
    microblock_sequence: null,
    microblock_hash: null,
    microblock_parent_hash: null,
    vm_error: null,
  };
  const body = {
    ...base,
    transactions: [...base.transactions, burnTx],
    events: [
      ...base.events,
      { txid: TXID, event_index: base.events.length, committed: true, type: 'stx_transfer_event', stx_transfer_event: { sender: SENDER.address, recipient: DELEGATE.address, amount: '777', memo: '' } },
    ],
  };

  it('validates, and becomes a token_transfer row with its event', () => {
    const r = validateObserverMessage('/new_block', body);
    if (!r.ok) throw new Error(r.message);
    const u = blockUpdate(r.message as NewBlockMessage);
    if (u.kind !== 'block') throw new Error('not a block');
    const row = u.txs.find((t) => t.tx_id === TXID)!;
    expect(row).toBeDefined();
    expect(row).toMatchObject({ raw_tx: '0x00', tx_type: 'token_transfer', fee_rate: '0', nonce: 0, sender_address: SENDER.address, token_transfer_recipient: DELEGATE.address, token_transfer_amount: '777', event_count: 1 });
    expect(u.events.filter((e) => e.tx_id === TXID).map((e) => e.event_type)).toEqual(['stx_asset']);
    expect(u.block.tx_count).toBe(body.transactions.length);
  });

  it('a burnchain-op tx without events is dropped, not a 400/500', () => {
    const r = validateObserverMessage('/new_block', { ...body, events: base.events });
    if (!r.ok) throw new Error(r.message);
    const u = blockUpdate(r.message as NewBlockMessage);
    if (u.kind !== 'block') throw new Error('not a block');
    expect(u.txs.some((t) => t.tx_id === TXID)).toBe(false);
    expect(u.txs.length).toBe(base.transactions.length);
    expect(u.block.tx_count).toBe(base.transactions.length + 1);
  });

  it('accepts every burnchain_op shape of the node, and still rejects a non-object', () => {
    for (const op of [STACK_STX_OP, { pre_stx: { burn_block_height: 1, burn_header_hash: 'aa', output: SENDER, burn_txid: 'bb', vtxindex: 0 } }, { delegate_stx: { reward_addr: null, until_burn_height: null } }, null]) {
      const r = validateObserverMessage('/new_block', { ...body, transactions: [...base.transactions, { ...burnTx, burnchain_op: op }] });
      expect(r.ok, JSON.stringify(op)).toBe(true);
    }
    const bad = validateObserverMessage('/new_block', { ...body, transactions: [...base.transactions, { ...burnTx, burnchain_op: 'x' }] });
    expect(bad.ok).toBe(false);
  });
});
