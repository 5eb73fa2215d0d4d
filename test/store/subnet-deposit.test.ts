/**
 * Subnet (L2) deposits from the L1 chain. A subnet node reports them in /new_block as txs with `raw_tx` 0x00, usually
 * without a burnchain_op, carrying the mint event of the deposit (nft / ft / stx mint) or, for an asset registration,
 * a `register_asset` op and a print event of the boot `subnet` contract. Like the reference, they become synthetic
 * Stacks txs (fee 0, nonce 0, anchor mode any, post-condition mode allow) that are stored and served with their event.
 * The block messages below are built here, modelled on what a subnet node sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeContractDeploy, privateKeyToAddress } from '@stacks/transactions';
import { burnchainOpTx, type BurnOpNodeEvent } from '../../src/chain/burnchain-op.js';
import { cv } from '../../src/chain/pox.js';
import { blockUpdate } from '../../src/observer/to-update.js';
import { validateObserverMessage, type NewBlockMessage } from '../../src/observer/schemas.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { deliver, get } from '../helpers/http.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- loosely typed JSON answers
type Json = Record<string, any>;

const KEY = '6d430bb91222408e7706c9001cfaeb91b08c2be6d5ac95779ab52c6b431950e001';
const DEPLOYER = privateKeyToAddress(KEY, 'testnet');
const USER = 'ST2NEB84ASENDXKYGJPQW86YXQCEFEX2ZQPG87ND';
const BOOT = 'ST000000000000000000002AMW42H';
const NFT_CONTRACT = `${DEPLOYER}.simple-nft-l2`;
const FT_CONTRACT = `${DEPLOYER}.simple-ft-l2`;

const h32 = (byte: string) => '0x' + byte.repeat(32);
const TX = { nft: h32('a1'), ft: h32('a2'), stx: h32('a3'), reg: h32('a4') };
const BURN_TXID = 'c4'.repeat(32);
const ZERO_COST = { read_count: 0, read_length: 0, runtime: 0, write_count: 0, write_length: 0 };

function ev(txid: string, index: number, type: string, body: Record<string, unknown>): BurnOpNodeEvent {
  return { txid, event_index: index, committed: true, type, [type]: body };
}

/** A tx entry of /new_block. */
function tx(txid: string, index: number, rawTx = '0x00', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    txid,
    raw_tx: rawTx,
    status: 'success',
    tx_index: index,
    raw_result: '0x0703',
    contract_abi: null,
    execution_cost: { ...ZERO_COST, runtime: 1000 },
    microblock_hash: null,
    microblock_sequence: null,
    microblock_parent_hash: null,
    ...extra,
  };
}

/** A /new_block body (pre-Nakamoto subnet shape) at `height`, child of the block at height - 1. */
function block(height: number, transactions: unknown[], events: unknown[]): Record<string, unknown> {
  const hashOf = (h: number, tag: string) => '0x' + tag + h.toString(16).padStart(62, '0');
  return {
    block_hash: hashOf(height, 'b0'),
    index_block_hash: hashOf(height, 'c0'),
    parent_block_hash: height === 1 ? h32('00') : hashOf(height - 1, 'b0'),
    parent_index_block_hash: hashOf(height - 1, 'c0'),
    block_height: height,
    burn_block_hash: hashOf(height + 3, 'd0'),
    burn_block_height: height + 3,
    burn_block_time: 1_700_000_000 + height * 60,
    parent_burn_block_hash: hashOf(height + 2, 'd0'),
    parent_burn_block_height: height + 2,
    parent_burn_block_timestamp: 1_700_000_000 + (height - 1) * 60,
    parent_microblock: h32('00'),
    parent_microblock_sequence: 0,
    miner_txid: hashOf(height, 'e0'),
    matured_miner_rewards: [],
    anchored_cost: ZERO_COST,
    confirmed_microblocks_cost: ZERO_COST,
    transactions,
    events,
  };
}

const NFT_ABI = {
  maps: [],
  variables: [],
  fungible_tokens: [],
  non_fungible_tokens: [{ name: 'nft-token', type: 'uint128' }],
  functions: [
    {
      name: 'deposit-from-burnchain',
      access: 'public',
      args: [
        { name: 'id', type: 'uint128' },
        { name: 'recipient', type: 'principal' },
      ],
      outputs: { type: { response: { ok: 'bool', error: 'uint128' } } },
    },
  ],
};

const NFT_SOURCE = `(define-non-fungible-token nft-token uint)
(define-public (deposit-from-burnchain (id uint) (recipient principal))
  (begin
    (asserts! (is-eq tx-sender '${BOOT}) (err u1))
    (nft-mint? nft-token id recipient)))`;

/** The subnet contract's register-asset print event (a tuple with the L1 burnchain txid). */
const REGISTER_PRINT = cv.tuple({
  event: cv.stringAscii('register-contract'),
  'asset-type': cv.stringAscii('nft'),
  'l1-contract': cv.principal(`${USER}.simple-nft-l1`),
  'l2-contract': cv.principal(NFT_CONTRACT),
  'burnchain-txid': cv.buffer(BURN_TXID),
});

const DEPOSIT_EVENTS = [
  ev(TX.nft, 0, 'nft_mint_event', { asset_identifier: `${NFT_CONTRACT}::nft-token`, recipient: USER, value: { UInt: 5 }, raw_value: cv.uint(5n) }),
  ev(TX.ft, 1, 'ft_mint_event', { asset_identifier: `${FT_CONTRACT}::ft-token`, recipient: USER, amount: '250' }),
  ev(TX.stx, 2, 'stx_mint_event', { recipient: USER, amount: '12345678' }),
  ev(TX.reg, 3, 'contract_event', { contract_identifier: `${BOOT}.subnet`, topic: 'print', value: null, raw_value: REGISTER_PRINT }),
];

const REGISTER_OP = {
  register_asset: {
    asset_type: 'nft',
    burn_header_hash: 'dd'.repeat(32),
    l1_contract_id: `${USER}.simple-nft-l1`,
    l2_contract_id: NFT_CONTRACT,
    txid: BURN_TXID,
  },
};

describe('burnchainOpTx: subnet deposits', () => {
  const build = (txid: string, burnchain_op: unknown = null) =>
    burnchainOpTx({ txid, raw_result: '0x0703', burnchain_op: burnchain_op as never, burnBlockHeight: 7, events: DEPOSIT_EVENTS });

  it('an NFT mint → <asset contract>::deposit-from-burnchain (id, recipient), sent by the recipient', () => {
    const d = build(TX.nft)!;
    expect(d).toMatchObject({
      txId: TX.nft,
      rawTx: '0x00',
      txType: 'contract_call',
      nonce: 0,
      feeRate: '0',
      senderAddress: USER,
      sponsored: false,
      anchorMode: 'any',
      postConditionMode: 'allow',
      contractCallContractId: NFT_CONTRACT,
      contractCallFunctionName: 'deposit-from-burnchain',
    });
    expect(d.api).toMatchObject({ tx_type: 'contract_call', sender_address: USER, post_conditions: [], fee_rate: '0', nonce: 0 });
    expect(d.api.contract_call!.function_args).toEqual([
      { hex: cv.uint(5n), repr: 'u5', name: '', type: 'uint' },
      { hex: cv.principal(USER), repr: `'${USER}`, name: '', type: 'principal' },
    ]);
  });

  it('an FT mint → the same call with (amount, recipient)', () => {
    const d = build(TX.ft)!;
    expect(d).toMatchObject({ senderAddress: USER, contractCallContractId: FT_CONTRACT, contractCallFunctionName: 'deposit-from-burnchain' });
    expect(d.api.contract_call!.function_args!.map((a) => a.repr)).toEqual(['u250', `'${USER}`]);
  });

  it('an STX mint → token_transfer from the boot address, memo 0x', () => {
    const d = build(TX.stx)!;
    expect(d).toMatchObject({ txType: 'token_transfer', senderAddress: BOOT, tokenTransferRecipient: USER, tokenTransferAmount: '12345678' });
    expect(d.api.token_transfer).toEqual({ recipient_address: USER, amount: '12345678', memo: '0x' });
    // mainnet recipient → mainnet boot address
    const main = 'SP2W78BS5NX7X4ES4N09J4FHC4GND25W8X96Q0H03';
    const dm = burnchainOpTx({ txid: TX.stx, raw_result: '0x0703', burnBlockHeight: 7, events: [ev(TX.stx, 0, 'stx_mint_event', { recipient: main, amount: '1' })] })!;
    expect(dm.senderAddress).toBe('SP000000000000000000002Q6VF78');
  });

  it('a register_asset op with the subnet print event → <boot>.subnet::register-asset-contract', () => {
    const d = build(TX.reg, REGISTER_OP)!;
    expect(d).toMatchObject({ txType: 'contract_call', senderAddress: BOOT, contractCallContractId: `${BOOT}.subnet`, contractCallFunctionName: 'register-asset-contract' });
    expect(d.api.contract_call!.function_args!.map((a) => [a.repr, a.type])).toEqual([
      ['"nft"', '(string-ascii 3)'],
      [`'${USER}.simple-nft-l1`, 'principal'],
      [`'${NFT_CONTRACT}`, 'principal'],
      [`0x${BURN_TXID}`, '(buff 32)'],
    ]);
    // without the op, or with an unknown asset type, there is nothing to rebuild it from
    expect(build(TX.reg)).toBeNull();
    expect(build(TX.reg, { register_asset: { ...REGISTER_OP.register_asset, asset_type: 'xyz' } })).toBeNull();
  });

  it('the reference’s order: an STX transfer event wins over a mint event; NFT before FT before STX mint', () => {
    const both = [
      ev(TX.nft, 0, 'stx_mint_event', { recipient: USER, amount: '9' }),
      ev(TX.nft, 1, 'ft_mint_event', { asset_identifier: `${FT_CONTRACT}::ft-token`, recipient: USER, amount: '3' }),
      ev(TX.nft, 2, 'nft_mint_event', { asset_identifier: `${NFT_CONTRACT}::nft-token`, recipient: USER, value: null, raw_value: cv.uint(1n) }),
    ];
    const d = burnchainOpTx({ txid: TX.nft, raw_result: '0x0703', burnBlockHeight: 7, events: both })!;
    expect(d.contractCallContractId).toBe(NFT_CONTRACT);
    const d2 = burnchainOpTx({ txid: TX.nft, raw_result: '0x0703', burnBlockHeight: 7, events: both.slice(0, 2) })!;
    expect(d2.contractCallContractId).toBe(FT_CONTRACT);
    const withTransfer = [ev(TX.nft, 3, 'stx_transfer_event', { sender: USER, recipient: BOOT, amount: '4', memo: '' }), ...both];
    expect(burnchainOpTx({ txid: TX.nft, raw_result: '0x0703', burnBlockHeight: 7, events: withTransfer })!.txType).toBe('token_transfer');
  });

  it('a malformed mint event is not rebuilt (skipped), never a throw', () => {
    const good = { asset_identifier: `${NFT_CONTRACT}::nft-token`, recipient: USER, value: null, raw_value: cv.uint(1n) };
    for (const broken of [{ asset_identifier: 'nonsense' }, { recipient: 'not-a-principal' }, { raw_value: '0x01' }]) {
      const bad = [ev(TX.nft, 0, 'nft_mint_event', { ...good, ...broken })];
      expect(burnchainOpTx({ txid: TX.nft, raw_result: '0x0703', burnBlockHeight: 7, events: bad }), JSON.stringify(broken)).toBeNull();
    }
  });
});

describe('subnet deposit txs through the service', () => {
  let svc: TestService;
  let deployTxId: string;
  let block2: Record<string, unknown>;


  beforeAll(async () => {
    const deploy = await makeContractDeploy({ contractName: 'simple-nft-l2', codeBody: NFT_SOURCE, senderKey: KEY, fee: 10_000, nonce: 0, network: 'testnet' });
    deployTxId = '0x' + deploy.txid();
    const block1 = block(1, [tx(deployTxId, 0, '0x' + deploy.serialize().replace(/^0x/, ''), { contract_abi: NFT_ABI })], []);
    block2 = block(
      2,
      [
        tx(TX.nft, 0),
        tx(TX.ft, 1),
        tx(TX.stx, 2),
        tx(TX.reg, 3, '0x00', { burnchain_op: REGISTER_OP }),
      ],
      DEPOSIT_EVENTS,
    );
    svc = await startTestService({ STACKS_CHAIN_ID: 'testnet' });
    expect((await deliver(svc, '/new_block', block1)).status).toBe(200);
    expect((await deliver(svc, '/new_block', block2)).status).toBe(200);
    await svc.service.pipeline?.idle();
  });
  afterAll(async () => svc?.stop());

  it('the message validates and converts to 4 tx rows, each with its event', () => {
    const r = validateObserverMessage('/new_block', block2);
    if (!r.ok) throw new Error(r.message);
    const u = blockUpdate(r.message as NewBlockMessage);
    if (u.kind !== 'block') throw new Error('not a block');
    expect(u.txs.map((t) => t.tx_id)).toEqual([TX.nft, TX.ft, TX.stx, TX.reg]);
    expect(u.txs.map((t) => t.event_count)).toEqual([1, 1, 1, 1]);
    expect(u.events.map((e) => [e.tx_id, e.event_type])).toEqual([
      [TX.nft, 'non_fungible_token_asset'],
      [TX.ft, 'fungible_token_asset'],
      [TX.stx, 'stx_asset'],
      [TX.reg, 'smart_contract_log'],
    ]);
    expect(u.block.tx_count).toBe(u.txs.length);
  });

  it('/extended/v1/tx/{id}: the NFT deposit as a contract call, with the ABI’s signature and its mint event', async () => {
    const r = await get(svc, `/extended/v1/tx/${TX.nft}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      tx_id: TX.nft,
      tx_type: 'contract_call',
      nonce: 0,
      fee_rate: '0',
      sender_address: USER,
      sponsored: false,
      anchor_mode: 'any',
      post_condition_mode: 'allow',
      post_conditions: [],
      tx_status: 'success',
      tx_result: { hex: '0x0703', repr: '(ok true)' },
      tx_index: 0,
      block_height: 2,
      canonical: true,
      event_count: 1,
      contract_call: {
        contract_id: NFT_CONTRACT,
        function_name: 'deposit-from-burnchain',
        function_signature: '(define-public (deposit-from-burnchain (id uint) (recipient principal)))',
        function_args: [
          { hex: cv.uint(5n), repr: 'u5', name: 'id', type: 'uint' },
          { hex: cv.principal(USER), repr: `'${USER}`, name: 'recipient', type: 'principal' },
        ],
      },
    });
    expect(r.body.events).toEqual([
      {
        event_index: 0,
        event_type: 'non_fungible_token_asset',
        tx_id: TX.nft,
        asset: { asset_event_type: 'mint', asset_id: `${NFT_CONTRACT}::nft-token`, sender: '', recipient: USER, value: { hex: cv.uint(5n), repr: 'u5' } },
      },
    ]);
  });

  it('/extended/v1/tx/{id}: FT and STX deposits and the asset registration', async () => {
    const ft = await get(svc, `/extended/v1/tx/${TX.ft}`);
    expect(ft.status).toBe(200);
    expect(ft.body).toMatchObject({ tx_type: 'contract_call', sender_address: USER, contract_call: { contract_id: FT_CONTRACT, function_name: 'deposit-from-burnchain', function_signature: '' } });
    expect(ft.body.events).toEqual([
      { event_index: 0, event_type: 'fungible_token_asset', tx_id: TX.ft, asset: { asset_event_type: 'mint', asset_id: `${FT_CONTRACT}::ft-token`, sender: '', recipient: USER, amount: '250' } },
    ]);

    const stx = await get(svc, `/extended/v1/tx/${TX.stx}`);
    expect(stx.status).toBe(200);
    expect(stx.body).toMatchObject({ tx_type: 'token_transfer', sender_address: BOOT, nonce: 0, fee_rate: '0', token_transfer: { recipient_address: USER, amount: '12345678', memo: '0x' } });
    expect(stx.body.events).toEqual([
      { event_index: 0, event_type: 'stx_asset', tx_id: TX.stx, asset: { asset_event_type: 'mint', sender: '', recipient: USER, amount: '12345678' } },
    ]);

    const reg = await get(svc, `/extended/v1/tx/${TX.reg}`);
    expect(reg.status).toBe(200);
    expect(reg.body).toMatchObject({ tx_type: 'contract_call', sender_address: BOOT, contract_call: { contract_id: `${BOOT}.subnet`, function_name: 'register-asset-contract' } });
    expect(reg.body.events).toMatchObject([{ event_type: 'smart_contract_log', tx_id: TX.reg, contract_log: { contract_id: `${BOOT}.subnet`, topic: 'print' } }]);
  });

  it('the block lists every deposit tx and its tx_count matches', async () => {
    const v1 = await get(svc, '/extended/v1/block/by_height/2');
    expect(v1.status).toBe(200);
    expect([...v1.body.txs].sort()).toEqual([TX.nft, TX.ft, TX.stx, TX.reg].sort());
    const v2 = await get(svc, '/extended/v2/blocks/2');
    expect(v2.status).toBe(200);
    expect(v2.body.tx_count).toBe(4);
    expect(v2.body.tx_count).toBe(v1.body.txs.length);
    // and /tx/multiple finds them all
    const ids = [TX.nft, TX.ft, TX.stx, TX.reg];
    const multi = await get(svc, `/extended/v1/tx/multiple?${ids.map((id) => `tx_id=${id}`).join('&')}`);
    expect(multi.status).toBe(200);
    for (const id of ids) expect(multi.body[id]).toMatchObject({ found: true, result: { tx_id: id, block_height: 2 } });
    // the deploy of the L2 contract is there too
    expect((await get(svc, `/extended/v1/tx/${deployTxId}`)).body.tx_type).toBe('smart_contract');
  });

  it('/extended/v1/tx/events?tx_id= gives the deposit’s event', async () => {
    const r = await get(svc, `/extended/v1/tx/events?tx_id=${TX.nft}`);
    expect(r.status).toBe(200);
    expect(r.body.results.map((e: Json) => e.event_type)).toEqual(['non_fungible_token_asset']);
  });
});
