/**
 * The native codec spins forever on a Clarity value with an unknown type id (src/chain/wire-guard.ts). The guard in
 * front of it must reject every such value, alone or inside a transaction, before the codec sees it — and must never
 * reject what the codec decodes: every raw tx and Clarity value of every fixture and of a generated chain passes.
 * Through the observer, such a message is a 400 with a dead letter, answered at once, and the service goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Pc,
  bufferCV,
  contractPrincipalCV,
  listCV,
  makeUnsignedContractCall,
  makeUnsignedSTXTokenTransfer,
  serializeCV,
  serializeTransaction,
  someCV,
  standardPrincipalCV,
  tupleCV,
  uintCV,
} from '@stacks/transactions';
import { checkClarityValue, checkTransaction, MalformedWireError } from '../../src/chain/wire-guard.js';
import { codec } from '../../src/chain/native.js';
import { fixtureNames, readFixture } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { ChainGenerator } from '../../load/generator/index.js';

const PUB = '02' + '11'.repeat(32);
const ADDR = 'ST2JHG361ZXG51QTKY2NQCVBPPRRE2KZB1HR05NNC';
const hexOf = (x: string | Uint8Array) => (typeof x === 'string' ? x : Buffer.from(x).toString('hex'));

/** A uint Clarity value 0x01 + 16 bytes whose low byte is `marker`: easy to find in a serialized tx. */
const markedUint = (marker: number) => '01' + '00'.repeat(15) + marker.toString(16).padStart(2, '0');

async function contractCall(): Promise<string> {
  const tx = await makeUnsignedContractCall({
    contractAddress: ADDR,
    contractName: 'guard-test',
    functionName: 'f',
    functionArgs: [
      uintCV(0x4d),
      listCV([uintCV(0x4e)]),
      tupleCV({ a: someCV(uintCV(0x4f)) }),
      contractPrincipalCV(ADDR, 'c'),
      bufferCV(Buffer.from('ok')),
    ],
    postConditions: [Pc.principal(ADDR).willSendAsset().nft(`${ADDR}.nft::token`, uintCV(0x50))],
    publicKey: PUB,
    fee: 1,
    nonce: 0,
    network: 'testnet',
  });
  return hexOf(serializeTransaction(tx));
}

/** `hex` with the type byte of the marked uint replaced by `type`. */
function corrupt(hex: string, marker: number, type = 'ff'): string {
  const i = hex.indexOf(markedUint(marker));
  expect(i).toBeGreaterThan(0);
  return hex.slice(0, i) + type + hex.slice(i + 2);
}

describe('wire guard in front of the native codec', () => {
  it('accepts every Clarity value shape and rejects unknown type ids at any depth', () => {
    for (const ok of ['0x0100000000000000000000000000000001', '0x03', '0x09', '0x0a03', '0x0b0000000103', '0x0c00000001016103', '0x0d000000026869']) {
      expect(() => checkClarityValue(ok)).not.toThrow();
      expect(typeof codec.decodeClarityValueToRepr(ok)).toBe('string');
    }
    for (const bad of ['0xff', '0x0f', '0x0a0f', '0x070f', '0x08ff', '0x0b00000002030f', '0x0c000000010161ff', '0x0a0a0a0a10']) {
      expect(() => checkClarityValue(bad), bad).toThrow(/unknown Clarity type id/);
      // the guarded codec throws instead of spinning
      expect(() => codec.decodeClarityValueToRepr(bad), bad).toThrow(MalformedWireError);
      expect(() => codec.decodeClarityValue(bad), bad).toThrow(MalformedWireError);
    }
    // a short value cannot spin the codec: the guard lets it through and the codec reports it
    expect(() => checkClarityValue('0x0b00000002')).not.toThrow();
    expect(() => codec.decodeClarityValueToRepr('0x0b00000002')).toThrow(/deserializing/);
    expect(() => checkClarityValue('0x' + '0a'.repeat(100) + '03')).toThrow(/deeper/);
  });

  it('finds the Clarity values inside transactions: arguments, nested values, NFT post-conditions, recipients', async () => {
    const call = await contractCall();
    expect(() => checkTransaction(call)).not.toThrow();
    expect(codec.decodeTransaction(call).payload).toMatchObject({ function_name: 'f' });
    for (const marker of [0x4d, 0x4e, 0x4f, 0x50]) {
      for (const type of ['ff', '0f', '20']) {
        const bad = corrupt(call, marker, type);
        expect(() => checkTransaction(bad), `marker ${marker} type ${type}`).toThrow(/unknown Clarity type id/);
        expect(() => codec.decodeTransaction(bad)).toThrow(MalformedWireError);
      }
    }
    const transfer = hexOf(
      serializeTransaction(await makeUnsignedSTXTokenTransfer({ recipient: ADDR, amount: 5, fee: 1, nonce: 0, publicKey: PUB, network: 'testnet' })),
    );
    expect(() => checkTransaction(transfer)).not.toThrow();
    // the recipient principal: its type byte follows the payload type byte (0x00) after the post-condition count
    // (a standard principal value: type 0x05, then the address version, 0x1a for ST…)
    expect(hexOf(serializeCV(standardPrincipalCV(ADDR))).slice(0, 4)).toBe('051a');
    const at = transfer.indexOf('00000000' + '00' + '051a');
    expect(at).toBeGreaterThan(0);
    const badTransfer = transfer.slice(0, at + 10) + 'ff' + transfer.slice(at + 12);
    expect(() => checkTransaction(badTransfer)).toThrow(/unknown Clarity type id/);
  });

  it('passes every raw tx and Clarity value of every fixture and of a generated chain', async () => {
    let txs = 0;
    let values = 0;
    const visit = (path: string, bodyText: string) => {
      const body = JSON.parse(bodyText) as unknown;
      const raws: string[] =
        path === '/new_mempool_tx'
          ? (body as string[])
          : ((body as { transactions?: { raw_tx: string; raw_result?: string }[] }).transactions ?? []).map((t) => t.raw_tx);
      for (const r of raws) {
        if (r === '0x00') continue;
        checkTransaction(r);
        txs++;
      }
      for (const t of (body as { transactions?: { raw_result?: string }[] }).transactions ?? []) {
        if (t.raw_result) (checkClarityValue(t.raw_result), values++);
      }
      for (const e of (body as { events?: Record<string, { raw_value?: string }>[] }).events ?? []) {
        for (const v of Object.values(e)) if (v && typeof v === 'object' && v.raw_value) (checkClarityValue(v.raw_value), values++);
      }
    };
    for (const name of fixtureNames()) for (const l of readFixture(name)) visit(l.path, l.body);
    const gen = new ChainGenerator({ blocks: 20, txsPerBlock: 8, seed: 'guard', forks: false });
    for await (const m of gen.messages()) visit(m.path, m.body);
    expect(txs).toBeGreaterThan(300);
    expect(values).toBeGreaterThan(300);
  });

  describe('through the observer', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService();
    });
    afterAll(async () => {
      await svc?.stop();
    });

    it('a mempool tx with a bad Clarity argument is a 400 naming the tx, a dead letter, and the service goes on', async () => {
      const bad = corrupt(await contractCall(), 0x4e);
      const res = await fetch(svc.observer + '/new_mempool_tx', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(['0x' + bad]),
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { message: string };
      expect(body.message).toMatch(/unknown Clarity type id/);
      const [dead] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM dead_letters`;
      expect(dead.n).toBe(1);
      const [stored] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM mempool_txs`;
      expect(stored.n).toBe(0);
      expect((await fetch(svc.observer + '/')).status).toBe(200);
      expect((await fetch(svc.api + '/extended')).status).toBe(200);
    });

    it('a block whose event carries a bad Clarity value is a 400 naming the field, and nothing of it is stored', async () => {
      const line = fixtureNames()
        .flatMap((n) => readFixture(n))
        .find((l) => l.path === '/new_block' && /"raw_value"/.test(l.body))!;
      const block = JSON.parse(line.body) as { events: Record<string, { raw_value?: string }>[] };
      const i = block.events.findIndex((e) => Object.values(e).some((v) => v && typeof v === 'object' && v.raw_value));
      const key = Object.keys(block.events[i]).find((k) => (block.events[i][k] as { raw_value?: string })?.raw_value)!;
      block.events[i][key].raw_value = '0x0b00000001ff';
      const res = await fetch(svc.observer + '/new_block', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(block),
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(new RegExp(`events/${i}.*unknown Clarity type id`));
      const [blocks] = await svc.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM blocks`;
      expect(blocks.n).toBe(0);
    });
  });
});
