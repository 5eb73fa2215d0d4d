/**
 * BNS v1 (sql/0050_bns.sql, src/api/routes/bns/): names and namespaces derived from the BNS boot contract's prints
 * through the derived hook — always equal to a derivation from scratch over the canonical chain, through forks —,
 * zonefiles and subdomains from /attachments/new, the renewal synthesised from a print-less contract call, the
 * migration's backfill equal to a fresh ingest, and the prices answered by a read-only call on the node pool ahead of
 * the /v2 proxy.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cl, serializeCV, makeUnsignedContractCall, type ClarityValue } from '@stacks/transactions';
import { startTestService, type TestService } from '../helpers/service.js';
import { readFixture } from '../helpers/fixtures.js';
import { ChainGenerator } from '../../load/generator/index.js';
import type { GeneratedMessage } from '../../load/generator/types.js';
import { completeBnsBackfill } from '../../src/store/bns-write.js';
import { importBns } from '../../src/store/bns-import.js';
import { codec } from '../../src/chain/native.js';
import { recordingSocket, rpcClient } from '../helpers/push-clients.js';
import { sqlDir } from '../../src/store/migrate.js';
import type { Sql } from '../../src/store/sql.js';
import { deliver, get } from '../helpers/http.js';
import { expectMaintainedEqualsRecomputed, type DerivedTable } from '../helpers/derived.js';

const BNS = 'ST000000000000000000002AMW42H.bns';
const hex = (cv: ClarityValue) => '0x' + serializeCV(cv);

type Rows = Record<string, unknown>[];

async function maintained(sql: Sql): Promise<{ names: Rows; namespaces: Rows; v2: Rows }> {
  const names = await sql`SELECT * FROM bns_names ORDER BY name, registered_at, tx_index, event_index NULLS FIRST, index_block_hash`;
  const namespaces = await sql`SELECT * FROM bns_namespaces ORDER BY namespace_id, ready_block, index_block_hash`;
  const v2 = await sql`SELECT * FROM bns_v2_names ORDER BY name, block_height, tx_index, event_index, index_block_hash`;
  return { names: [...names], namespaces: [...namespaces], v2: [...v2] };
}

/** The same tables derived from scratch over the canonical blocks, in chain order (rolled back afterwards). */
async function recomputed(sql: Sql): Promise<{ names: Rows; namespaces: Rows; v2: Rows }> {
  let out: { names: Rows; namespaces: Rows; v2: Rows } | undefined;
  await sql
    .begin(async (tx) => {
      const t = tx as unknown as Sql;
      await t`DELETE FROM bns_names`;
      await t`DELETE FROM bns_namespaces`;
      await t`DELETE FROM bns_v2_names`;
      const blocks = await t<{ index_block_hash: string }[]>`SELECT index_block_hash FROM blocks WHERE canonical ORDER BY block_height`;
      for (const b of blocks) {
        await t`SELECT bns_apply(${[b.index_block_hash]}::text[], 1)`;
        await t`SELECT bns_v2_apply(${[b.index_block_hash]}::text[], 1)`;
      }
      out = await maintained(t);
      throw new Error('rollback');
    })
    .catch((err: Error) => {
      if (err.message !== 'rollback') throw err;
    });
  return out!;
}

const bnsTables: DerivedTable<{ names: Rows; namespaces: Rows; v2: Rows }> = { name: 'bns_names, bns_namespaces, bns_v2_names', read: maintained, recompute: recomputed };

describe('BNS from the recorded streams', () => {
  for (const fixture of ['mainnet-out-of-order-microblock', 'mainnet-reorg-scenario2']) {
    it(`${fixture}: the names equal a derivation from scratch after every message`, async () => {
      const svc = await startTestService();
      try {
        for (const l of readFixture(fixture)) {
          expect((await deliver(svc, l.path, l.body)).status).toBe(200);
          if (l.path === '/new_block') await expectMaintainedEqualsRecomputed(svc.db.sql, bnsTables);
        }
        const { names } = await maintained(svc.db.sql);
        expect(names).toHaveLength(1);
      } finally {
        await svc.stop();
      }
    });
  }

  it('mainnet-reorg-scenario2: genome360.btc stays one name through the fork; its owner holds it', async () => {
    const svc = await startTestService();
    try {
      for (const l of readFixture('mainnet-reorg-scenario2')) await deliver(svc, l.path, l.body);
      expect((await get(svc, '/v1/names')).body).toEqual(['genome360.btc']);
      const info = await get(svc, '/v1/names/genome360.btc');
      expect(info.body).toMatchObject({ address: 'SP20P421F7R0QMGKSSHN2MZ0ZF6V7KD4F6JJHB7R1', status: 'name-register', expire_block: 0 });
      expect((await get(svc, '/v1/addresses/stacks/SP20P421F7R0QMGKSSHN2MZ0ZF6V7KD4F6JJHB7R1')).body).toEqual({ names: ['genome360.btc'] });
      // only the canonical block's row is present
      const rows = await svc.db.sql<{ index_block_hash: string }[]>`
        SELECT n.index_block_hash FROM bns_names n JOIN blocks b USING (index_block_hash) WHERE b.canonical`;
      expect(rows).toHaveLength(1);
    } finally {
      await svc.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// A generated chain (testnet, forks, microblocks) with BNS operations injected into its blocks

const nameCV = (name: string, namespace: string) => Cl.tuple({ name: Cl.bufferFromUtf8(name), namespace: Cl.bufferFromUtf8(namespace) });

function namePrint(op: string, name: string, namespace: string, hash: string, sender: string): string {
  return hex(
    Cl.tuple({
      attachment: Cl.tuple({
        hash: Cl.bufferFromHex(hash),
        'attachment-index': Cl.uint(7),
        metadata: Cl.tuple({
          name: Cl.bufferFromUtf8(name),
          namespace: Cl.bufferFromUtf8(namespace),
          op: Cl.stringAscii(op),
          'tx-sender': Cl.standardPrincipal(sender),
        }),
      }),
    }),
  );
}

function namespaceReadyPrint(namespace: string, lifetime: number, importer: string, height: number): string {
  return hex(
    Cl.tuple({
      namespace: Cl.bufferFromUtf8(namespace),
      status: Cl.stringAscii('ready'),
      properties: Cl.tuple({
        'launched-at': Cl.some(Cl.uint(height)),
        lifetime: Cl.uint(lifetime),
        'revealed-at': Cl.uint(height - 1),
        'namespace-import': Cl.standardPrincipal(importer),
        'price-function': Cl.tuple({
          base: Cl.uint(4),
          coeff: Cl.uint(250),
          'no-vowel-discount': Cl.uint(20),
          'nonalpha-discount': Cl.uint(20),
          buckets: Cl.list([Cl.uint(6), Cl.uint(5), Cl.uint(4)]),
        }),
      }),
    }),
  );
}

const BNS_V2 = 'SP2QEZ06AGJ3RKJPBV14SY1V5BBFNAW33D96YPGZF.BNS-V2';

function v2Print(topic: string, name: string, ns: string, id: number, owner: string, height: number) {
  const props = Cl.some(
    Cl.tuple({
      'registered-at': Cl.some(Cl.uint(height)),
      'imported-at': Cl.none(),
      'hashed-salted-fqn-preorder': Cl.none(),
      'preordered-by': Cl.none(),
      'renewal-height': Cl.uint(height + 100),
      'stx-burn': Cl.uint(10),
      owner: owner ? Cl.standardPrincipal(owner) : Cl.standardPrincipal('SP2QEZ06AGJ3RKJPBV14SY1V5BBFNAW33D96YPGZF'),
    }),
  );
  const value = Cl.tuple({
    topic: Cl.stringAscii(topic),
    owner: owner ? Cl.standardPrincipal(owner) : Cl.stringAscii(''),
    name: Cl.tuple({ name: Cl.bufferFromUtf8(name), namespace: Cl.bufferFromUtf8(ns) }),
    id: Cl.uint(id),
    ...(topic === 'burn-name' ? {} : { properties: props }),
  });
  return { type: 'contract_event', contract_event: { contract_identifier: BNS_V2, topic: 'print', value: null, raw_value: hex(value) } };
}

function v2Nft(kind: 'mint' | 'transfer' | 'burn', id: number, recipient?: string, sender?: string) {
  return {
    type: `nft_${kind}_event`,
    [`nft_${kind}_event`]: {
      asset_identifier: `${BNS_V2}::BNS-V2`,
      ...(recipient ? { recipient } : {}),
      ...(sender ? { sender } : {}),
      value: null,
      raw_value: hex(Cl.uint(id)),
    },
  };
}

interface Block {
  msg: GeneratedMessage;
  body: { block_height: number; index_block_hash: string; transactions: Record<string, unknown>[]; events: Record<string, unknown>[] };
  /** a successful user tx: its id and sender */
  tx: { txid: string; sender: string };
}

/** A successful token transfer mined in the block itself (not in a confirmed microblock). */
function userTx(m: GeneratedMessage, body: Block['body']): { txid: string; sender: string } | undefined {
  const anchored = new Set(body.transactions.filter((r) => r.microblock_hash === null).map((r) => r.txid));
  const t = m.txs.find((x) => x.type === 'token_transfer' && x.status === 'success' && anchored.has(x.txId));
  return t ? { txid: t.txId, sender: t.sender } : undefined;
}

function addEvents(b: Block, events: Record<string, unknown>[]): void {
  for (const e of events) b.body.events.push({ txid: b.tx.txid, committed: true, event_index: b.body.events.length, ...e });
  b.msg.body = JSON.stringify(b.body);
}

const printEvent = (raw: string) => ({ type: 'contract_event', contract_event: { contract_identifier: BNS, topic: 'print', value: null, raw_value: raw } });
const nftEvent = (kind: 'mint' | 'transfer', name: string, ns: string, recipient: string, sender?: string) => ({
  type: `nft_${kind}_event`,
  [`nft_${kind}_event`]: { asset_identifier: `${BNS}::names`, recipient, ...(sender ? { sender } : {}), value: null, raw_value: hex(nameCV(name, ns)) },
});

/** Replaces the block's user tx by a print-less name-renewal call of the BNS contract (and drops that tx's events). */
async function renewalCall(b: Block, name: string, ns: string): Promise<string> {
  const tx = await makeUnsignedContractCall({
    contractAddress: BNS.split('.')[0],
    contractName: 'bns',
    functionName: 'name-renewal',
    functionArgs: [Cl.bufferFromUtf8(ns), Cl.bufferFromUtf8(name), Cl.uint(100), Cl.none(), Cl.none()],
    fee: 1000,
    nonce: 0,
    publicKey: '03ef788b3830c00abe8f64f62dc32fc863bc0b2cafeb073b6c8e1c7657d9c2c3ab',
    network: 'testnet',
  });
  const raw = '0x' + tx.serialize();
  const txid = '0x' + tx.txid();
  const receipt = b.body.transactions.find((r) => r.txid === b.tx.txid)!;
  Object.assign(receipt, { txid, raw_tx: raw, status: 'success', raw_result: hex(Cl.ok(Cl.bool(true))) });
  b.body.events = b.body.events.filter((e) => e.txid !== b.tx.txid).map((e, i) => ({ ...e, event_index: i }));
  b.tx = { txid, sender: '' };
  b.msg.body = JSON.stringify(b.body);
  return txid;
}

function attachment(b: Block, op: string, name: string, ns: string, hash: string, zonefile: string): string {
  return JSON.stringify([
    {
      attachment_index: '7',
      index_block_hash: b.body.index_block_hash,
      block_height: String(b.body.block_height),
      content_hash: '0x' + hash,
      contract_id: BNS,
      metadata: hex(Cl.tuple({ op: Cl.stringAscii(op), name: Cl.bufferFromUtf8(name), namespace: Cl.bufferFromUtf8(ns) })),
      tx_id: b.tx.txid,
      content: '0x' + Buffer.from(zonefile, 'utf8').toString('hex'),
    },
  ]);
}

describe('BNS on a generated chain with forks', () => {
  let svc: TestService;
  const A = 'ST3Y74M5227FDVHREWPH773F5Y1W1ED8WXXVB0G1S';
  const B = 'ST19H4R5A58CSW8MCADYZMGP85FN2RZ0Z9MXV452Z';
  const C = 'STXW53BDJBCGEFXNWEPZ90BSBTQM8TYEXQG3NP3K';
  const H_REG = 'aa'.repeat(20);
  const H_UPD = 'bb'.repeat(20);
  const subZonefile = '$ORIGIN sub1\n$TTL 3600\n_http._tcp URI 10 1 "https://gaia.example/hub/sub1/profile.json"\n';
  const zonefile =
    '$ORIGIN alice.pulse\n$TTL 3600\n_resolver IN URI 10 1 "https://resolver.example"\n' +
    `sub1 TXT "owner=${B}" "seqn=0" "parts=1" "zf0=${Buffer.from(subZonefile).toString('base64')}"\n`;
  let renewalTxId = '';
  let heights: Record<string, number> = {};
  let messages: { path: string; body: string; block?: Block }[] = [];

  beforeAll(async () => {
    const gen = new ChainGenerator({ blocks: 40, txsPerBlock: 4, seed: 'bns', forks: true, forkEvery: 9, forkDepth: 2, microblockEvery: 4 });
    const all: GeneratedMessage[] = [];
    for await (const m of gen.messages()) all.push(m);
    const blocks: Block[] = [];
    for (const m of all) {
      if (m.path !== '/new_block') continue;
      const body = JSON.parse(m.body) as Block['body'];
      const tx = userTx(m, body);
      if (tx) blocks.push({ msg: m, body, tx });
    }
    const canonical = blocks.filter((b) => b.msg.block!.finallyCanonical && b.body.block_height >= 3);
    // a block of a losing branch sent after the v1 operations below
    const orphan = blocks.find((b) => !b.msg.block!.finallyCanonical && all.indexOf(b.msg) > all.indexOf(canonical[6].msg))!;
    expect(orphan).toBeDefined();
    const [bNs, bReg, bUpd, bXfer, bBob, bRenew, bRevoke, bDave, bSale, bErin, bBurn] = canonical;
    expect(bBurn).toBeDefined();
    const h = (b: Block) => b.body.block_height;
    heights = { ns: h(bNs), reg: h(bReg), upd: h(bUpd), xfer: h(bXfer), bob: h(bBob), renew: h(bRenew), revoke: h(bRevoke) };
    addEvents(bNs, [printEvent(namespaceReadyPrint('pulse', 1000, A, h(bNs)))]);
    addEvents(bReg, [nftEvent('mint', 'alice', 'pulse', A), printEvent(namePrint('name-register', 'alice', 'pulse', H_REG, A))]);
    addEvents(bUpd, [printEvent(namePrint('name-update', 'alice', 'pulse', H_UPD, A))]);
    addEvents(bXfer, [nftEvent('transfer', 'alice', 'pulse', C, A), printEvent(namePrint('name-transfer', 'alice', 'pulse', '', A))]);
    addEvents(bBob, [
      nftEvent('mint', 'bob', 'pulse', A),
      printEvent(namePrint('name-register', 'bob', 'pulse', H_REG, A)),
      nftEvent('mint', 'carol', 'pulse', A),
      printEvent(namePrint('name-register', 'carol', 'pulse', H_REG, A)),
    ]);
    renewalTxId = await renewalCall(bRenew, 'bob', 'pulse');
    addEvents(bRevoke, [printEvent(namePrint('name-revoke', 'carol', 'pulse', '', A))]);
    // BNS-V2: dave.btc registered to A then sold to C (a marketplace sale: NFT transfer, no transfer-name print);
    // erin.btc registered then burned
    heights.dave = h(bDave);
    addEvents(bDave, [v2Nft('mint', 1, A), v2Print('new-name', 'dave', 'btc', 1, A, h(bDave))]);
    addEvents(bSale, [v2Nft('transfer', 1, C, A), { type: 'contract_event', contract_event: { contract_identifier: BNS_V2, topic: 'print', value: null, raw_value: hex(Cl.tuple({ a: Cl.stringAscii('buy-in-ustx'), id: Cl.uint(1) })) } }]);
    addEvents(bErin, [v2Nft('mint', 2, B), v2Print('new-name', 'erin', 'btc', 2, B, h(bErin))]);
    addEvents(bBurn, [v2Nft('burn', 2, undefined, B), v2Print('burn-name', 'erin', 'btc', 2, '', h(bBurn))]);
    // a block that loses its fork: its name must not survive
    // a block that loses its fork: its registration and its transfer must not survive
    addEvents(orphan, [
      nftEvent('mint', 'ghost', 'pulse', B),
      printEvent(namePrint('name-register', 'ghost', 'pulse', H_REG, B)),
      nftEvent('transfer', 'alice', 'pulse', B, C),
      printEvent(namePrint('name-transfer', 'alice', 'pulse', '', C)),
    ]);
    for (const m of all) {
      const b = blocks.find((x) => x.msg === m);
      messages.push({ path: m.path, body: m.body, block: b });
      // the zonefile of the update arrives after its block, as the node's Atlas sends it
      if (b === bUpd) messages.push({ path: '/attachments/new', body: attachment(bUpd, 'name-update', 'alice', 'pulse', H_UPD, zonefile) });
    }
    svc = await startTestService();
  }, 300_000);
  afterAll(async () => {
    await svc?.stop();
  });

  let pushed: { socket: Awaited<ReturnType<typeof recordingSocket>>; rpc: Awaited<ReturnType<typeof rpcClient>> } | undefined;

  it('the maintained names and namespaces equal a derivation from scratch after every block', async () => {
    const socket = await recordingSocket(svc.api, { rooms: ['bns-name:alice.pulse', 'bns-name:ghost.pulse', 'bns-name:erin.btc'] });
    const rpc = await rpcClient(svc.api.replace('http', 'ws') + '/extended/v1/ws');
    expect((await rpc.call('subscribe', { event: 'bns_name_update', name: 'alice.pulse' })).error).toBeUndefined();
    expect((await rpc.call('subscribe', { event: 'bns_name_update', name: 'not a name' })).error).toEqual({ code: -32602, message: 'Invalid params', data: 'invalid name' });
    pushed = { socket, rpc };
    let ghostSeen = false;
    for (const m of messages) {
      expect((await deliver(svc, m.path, m.body)).status).toBe(200);
      if (m.path !== '/new_block') continue;
      const now = await expectMaintainedEqualsRecomputed(svc.db.sql, bnsTables);
      ghostSeen ||= now.names.some((n) => n.name === 'ghost.pulse');
    }
    // the orphaned block's name was there while its branch led, and went with it
    expect(ghostSeen).toBe(true);
    expect((await get(svc, '/v1/names')).body).toEqual(['alice.pulse', 'bob.pulse']);
  }, 300_000);

  it('bns-name push rooms: every change of a name, and its disappearance with a losing fork', async () => {
    const { socket, rpc } = pushed!;
    await socket.sync();
    await rpc.sync();
    const alice = socket.got.filter((m) => m.event === 'bns-name:alice.pulse').map((m) => m.args[1] as Record<string, unknown>);
    // the transfer to B in the losing branch is pushed, then undone when its block is orphaned
    expect(alice.map((a) => [a.status, a.address, a.zonefile_hash])).toEqual([
      ['name-register', A, H_REG],
      ['name-update', A, H_UPD],
      ['name-transfer', C, H_UPD],
      ['name-transfer', B, H_UPD],
      ['name-transfer', C, H_UPD],
    ]);
    const ghost = socket.got.filter((m) => m.event === 'bns-name:ghost.pulse').map((m) => m.args[1]);
    expect(ghost).toEqual([expect.objectContaining({ status: 'name-register', address: B }), null]);
    // BNS-V2: registered, then burned
    const erin = socket.got.filter((m) => m.event === 'bns-name:erin.btc').map((m) => m.args[1]);
    expect(erin).toEqual([expect.objectContaining({ status: 'new-name', address: B }), null]);
    const viaRpc = rpc.notifications().filter((n) => n.method === 'bns_name_update');
    expect(viaRpc.map((n) => (n.params as { info: { address: string } }).info.address)).toEqual([A, A, C, B, C]);
    socket.socket.close();
    rpc.ws.close();
  });

  it('namespaces: ready on chain, with their names', async () => {
    expect((await get(svc, '/v1/namespaces')).body).toEqual({ namespaces: ['pulse'] });
    expect((await get(svc, '/v1/namespaces/pulse/names')).body).toEqual(['alice.pulse', 'bob.pulse']);
    expect((await get(svc, '/v1/namespaces/pulse/names?page=1')).body).toEqual({ error: 'Invalid page' });
    expect((await get(svc, '/v1/namespaces/btc/names')).status).toBe(400);
  });

  it('a transfer: the NFT recipient owns the name, expiry and zonefile are kept', async () => {
    const r = await get(svc, '/v1/names/alice.pulse');
    expect(r.body).toEqual({
      address: C,
      blockchain: 'stacks',
      expire_block: heights.upd + 1000,
      last_txid: expect.stringMatching(/^0x/),
      status: 'name-transfer',
      zonefile,
      zonefile_hash: H_UPD,
    });
    expect((await get(svc, '/v1/names/alice.pulse/zonefile')).body).toEqual({ zonefile });
    expect((await get(svc, `/v1/names/alice.pulse/zonefile/0x${H_UPD}`)).body).toEqual({ zonefile });
    // the register's zonefile never arrived: its hash is known, its content empty
    expect((await get(svc, `/v1/names/alice.pulse/zonefile/${H_REG}`)).body).toEqual({ zonefile: '' });
    // by address, names come from NFT custody as the reference keeps it: the transfer to B in the orphaned block
    // wrote B as alice.pulse's owner, and no block of the winning branch moved the name again, so C does not list it
    // (and B does: below); /v1/names reads the names table and says C
    expect((await get(svc, '/v1/addresses/stacks/' + C)).body).toEqual({ names: ['dave.btc'] });
  });

  it('subdomains from the name-update zonefile', async () => {
    expect((await get(svc, '/v1/names/alice.pulse/subdomains')).body).toEqual(['sub1.alice.pulse']);
    expect((await get(svc, '/v1/names/sub1.alice.pulse')).body).toMatchObject({
      address: B,
      blockchain: 'stacks',
      resolver: 'https://resolver.example',
      status: 'registered_subdomain',
      zonefile: subZonefile,
    });
    expect((await get(svc, '/v1/names/sub1.alice.pulse/zonefile')).body).toEqual({ zonefile: subZonefile });
    // an unknown subdomain of a name with a resolver: redirected there
    const redirected = await get(svc, '/v1/names/nosuch.alice.pulse?unanchored=true');
    expect(redirected.status).toBe(302);
    expect(redirected.location).toBe('https://resolver.example/v1/names/nosuch.alice.pulse?unanchored=true');
    // the orphaned block's name is gone (custody still names B, but the name does not exist); alice.pulse is listed
    // for B, whom the orphaned transfer wrote into custody (the reference's rule, above)
    expect((await get(svc, '/v1/addresses/stacks/' + B)).body).toEqual({ names: ['alice.pulse', 'sub1.alice.pulse'] });
    expect((await get(svc, '/v1/names/ghost.pulse')).status).toBe(404);
  });

  it('a renewal without zonefile hash is taken from the contract call; a revoked name is gone', async () => {
    const r = await get(svc, '/v1/names/bob.pulse');
    expect(r.body).toMatchObject({ status: 'name-renewal', last_txid: renewalTxId, zonefile_hash: H_REG, expire_block: heights.renew + 1000 });
    expect((await get(svc, '/v1/names/carol.pulse')).body).toEqual({ error: 'cannot find name carol.pulse' });
    expect((await get(svc, '/v1/addresses/stacks/' + A)).body).toEqual({ names: ['bob.pulse'] });
  });

  it('BNS-V2: /extended/v2/bns and the v1 fallbacks; the NFT holder is the owner; a burned name is gone', async () => {
    const dave = {
      name: 'dave.btc',
      namespace: 'btc',
      contract_id: BNS_V2,
      id: '1',
      owner: C,
      status: 'new-name',
      registered_at: heights.dave,
      renewal_height: heights.dave + 100,
      last_txid: expect.stringMatching(/^0x/),
      last_block_height: heights.dave,
    };
    expect((await get(svc, '/extended/v2/bns/names/dave.btc')).body).toEqual(dave);
    expect((await get(svc, '/extended/v2/bns/names/erin.btc')).status).toBe(404);
    expect((await get(svc, `/extended/v2/bns/addresses/${C}/names`)).body).toEqual({ limit: 20, offset: 0, total: 1, results: [dave] });
    expect((await get(svc, `/extended/v2/bns/addresses/${A}/names`)).body).toMatchObject({ total: 0, results: [] });
    expect((await get(svc, `/extended/v2/bns/addresses/${B}/names`)).body).toMatchObject({ total: 0 });
    expect((await get(svc, '/extended/v2/bns/namespaces/btc/names?limit=1')).body).toEqual({ limit: 1, offset: 0, total: 1, results: [dave] });
    expect((await get(svc, '/v1/names/dave.btc')).body).toEqual({
      address: C,
      blockchain: 'stacks',
      expire_block: heights.dave + 100,
      last_txid: expect.stringMatching(/^0x/),
      status: 'new-name',
      zonefile_hash: '',
    });
    expect((await get(svc, '/v1/names/erin.btc')).status).toBe(404);
    // v1 lists stay v1's
    expect((await get(svc, '/v1/names')).body).toEqual(['alice.pulse', 'bob.pulse']);
  });

  it("the migration's backfill (stored rows and event_log) equals the fresh ingest", async () => {
    const sql = svc.db.sql;
    const snapshot = async () => ({
      ...(await maintained(sql)),
      zonefiles: [...(await sql`SELECT * FROM bns_zonefiles ORDER BY name, zonefile_hash, tx_id`)],
      subdomains: [...(await sql`SELECT * FROM bns_subdomains ORDER BY fully_qualified_subdomain, tx_id`)],
    });
    const before = await snapshot();
    expect(before.subdomains).toHaveLength(1);
    await sql`DELETE FROM bns_names`;
    await sql`DELETE FROM bns_namespaces`;
    await sql`DELETE FROM bns_zonefiles`;
    await sql`DELETE FROM bns_subdomains`;
    await sql`DELETE FROM bns_v2_names`;
    await sql.unsafe(readFileSync(path.join(sqlDir(), '0050_bns.sql'), 'utf8'));
    await sql.unsafe(readFileSync(path.join(sqlDir(), '0052_bns_v2.sql'), 'utf8'));
    expect(await completeBnsBackfill(sql)).toBe(1);
    expect(await snapshot()).toEqual(before);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('BNS on a generated chain with real BNS contract calls (load/generator/ bns option)', () => {
  it('every block: tables = derivation from scratch; at the end the answers are the canonical branch state', async () => {
    const svc = await startTestService();
    try {
      const gen = new ChainGenerator({ blocks: 36, txsPerBlock: 2, seed: 'bns-calls', forks: true, forkEvery: 6, forkDepth: 2, microblockEvery: 5, bns: true });
      let attachments = 0;
      for await (const m of gen.messages()) {
        expect((await deliver(svc, m.path, m.body)).status).toBe(200);
        if (m.path === '/attachments/new') attachments++;
        if (m.path === '/new_block') await expectMaintainedEqualsRecomputed(svc.db.sql, bnsTables);
      }
      expect(gen.summary().orphanedBlocks).toBeGreaterThan(0);
      expect(attachments).toBeGreaterThan(3);
      const state = gen.bnsState();
      const live = Object.entries(state.names).filter(([, n]) => !n.revoked);
      expect(live.length).toBeGreaterThan(2);
      expect(Object.values(state.names).some((n) => n.revoked) || live.length > 5).toBe(true);
      expect((await get(svc, '/v1/namespaces')).body).toEqual({ namespaces: ['pulse'] });
      expect((await get(svc, '/v1/names')).body).toEqual(live.map(([n]) => n).sort());
      for (const [name, n] of Object.entries(state.names)) {
        const r = await get(svc, `/v1/names/${name}`);
        if (n.revoked) {
          expect(r.status, name).toBe(404);
          continue;
        }
        expect(r.body, name).toMatchObject({ address: n.owner, zonefile_hash: n.zonefileHash });
        expect((r.body as { zonefile: string }).zonefile, name).toMatch(/^\$ORIGIN /);
        // by address: the owner NFT custody names (the reference's rules, sql/0106: an orphaned transfer's recipient
        // stays until a canonical block moves the name again)
        const [c] = await svc.db.sql<{ owner: string | null }[]>`
          SELECT owner FROM nft_custody WHERE asset_identifier = 'ST000000000000000000002AMW42H.bns::names'
            AND value_hex = bns_name_cv(split_part(${name}, '.', 1), split_part(${name}, '.', 2))`;
        if (c.owner) {
          const owned = (await get(svc, `/v1/addresses/stacks/${c.owner}`)).body as { names: string[] };
          expect(owned.names, c.owner).toContain(name);
        }
        if (c.owner !== n.owner) {
          const other = (await get(svc, `/v1/addresses/stacks/${n.owner}`)).body as { names?: string[] };
          expect(other.names ?? [], n.owner).not.toContain(name);
        }
      }
      const statuses = (await svc.db.sql<{ status: string }[]>`SELECT DISTINCT status FROM bns_names ORDER BY status`).map((r) => r.status);
      expect(statuses).toEqual(['name-register', 'name-renewal', 'name-revoke', 'name-transfer', 'name-update']);
      const withSubdomains = await svc.db.sql<{ n: number }[]>`SELECT count(*)::integer AS n FROM bns_subdomains`;
      expect(withSubdomains[0].n).toBeGreaterThan(0);
    } finally {
      await svc.stop();
    }
  }, 300_000);
});

// ---------------------------------------------------------------------------------------------------------------

describe('BNS prices: a read-only call on the node pool, ahead of the /v2 proxy', () => {
  let node: http.Server;
  let nodeUrl = '';
  const calls: { url: string; body: { sender: string; arguments: string[] } }[] = [];

  beforeAll(async () => {
    node = http.createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        if (req.method === 'POST' && req.url?.startsWith('/v2/contracts/call-read/')) {
          const body = JSON.parse(data) as { sender: string; arguments: string[] };
          calls.push({ url: req.url, body });
          const okay = !body.arguments.includes(hex(Cl.bufferFromUtf8('nope')));
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(okay ? { okay: true, result: hex(Cl.ok(Cl.uint(640000000))) } : { okay: true, result: hex(Cl.error(Cl.int(2001))) }));
          return;
        }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ proxied: req.url }));
      });
    });
    await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
    nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => node.close(() => r())));

  it('answers from the BNS contract of the configured network', async () => {
    const svc = await startTestService({ STACKS_NODE_RPC_URLS: nodeUrl, STACKS_CHAIN_ID: 'testnet' });
    try {
      expect((await get(svc, '/v2/prices/names/muneeb.btc')).body).toEqual({ units: 'STX', amount: '640000000' });
      expect(calls.at(-1)!.url).toBe('/v2/contracts/call-read/ST000000000000000000002AMW42H/bns/get-name-price');
      expect(calls.at(-1)!.body.arguments).toEqual([hex(Cl.bufferFromUtf8('btc')), hex(Cl.bufferFromUtf8('muneeb'))]);
      expect((await get(svc, '/v2/prices/namespaces/btc')).body).toEqual({ units: 'STX', amount: '640000000' });
      expect(calls.at(-1)!.url).toBe('/v2/contracts/call-read/ST000000000000000000002AMW42H/bns/get-namespace-price');
      expect(await get(svc, '/v2/prices/namespaces/nope')).toMatchObject({ status: 400, body: { error: 'Invalid namespace' } });
      const n = calls.length;
      expect(await get(svc, '/v2/prices/names/notaname')).toMatchObject({ status: 400, body: { error: 'Invalid name' } });
      expect(await get(svc, '/v2/prices/names/a.b.c')).toMatchObject({ status: 400, body: { error: 'Invalid name' } });
      expect(calls.length).toBe(n); // validated before the node call
      // the rest of /v2 is still the proxy's
      expect((await get(svc, '/v2/info')).body).toEqual({ proxied: '/v2/info' });
    } finally {
      await svc.stop();
    }
  });

  it('without a reachable node: 503 with Retry-After, like a proxied call', async () => {
    const svc = await startTestService({ STACKS_NODE_RPC_URLS: 'http://127.0.0.1:1' });
    try {
      const res = await fetch(svc.api + '/v2/prices/names/muneeb.btc');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({ statusCode: 503 });
      expect((await fetch(svc.api + '/v2/prices/names/notaname')).status).toBe(400);
    } finally {
      await svc.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('BNS genesis import (import-bns)', () => {
  const OWNER = 'SP3D5EHK8SMJ3MMJWYCAKWJ2H4F1JQX85E33ZJDB9';
  const BTC_OWNER = '1J3PUxY5uDShUnHRrMyU6yKtoHEUPhKULs';
  /** a zonefile as the import files hold it: one line, newlines escaped as `\n` */
  const zf = (origin: string) => `$ORIGIN ${origin}\\n$TTL 3600\\n_http._tcp\tIN\tURI\t10\t1\t"https://gaia.example/${origin}/profile.json"\\n`;
  const unescaped = (origin: string) => zf(origin).replace(/\\n/g, '\n');
  const H1 = '11'.repeat(20);
  const H2 = '22'.repeat(20);
  const HS = '33'.repeat(20);
  let dir = '';
  const write = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    writeFileSync(path.join(dir, `${name}.sha256`), createHash('sha256').update(text).digest('hex') + '\n');
  };

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'bns-import-'));
    write(
      'chainstate.txt',
      [
        '-----BEGIN NAMESPACES-----',
        'namespace_id,address,buckets,base,coeff,nonalpha_discount,no_vowel_discount,lifetime',
        `id,${OWNER},6;5;4;3;2;1;0;0;0;0;0;0;0;0;0;0,4,250,4,4,52595`,
        '-----END NAMESPACES-----',
        '-----BEGIN NAMES-----',
        'name,address,zonefile_hash',
        `muneeb.id,${OWNER},${H1}`,
        `ghost.id,${OWNER},${H2}`,
        '-----END NAMES-----',
        '-----BEGIN STX BALANCES-----',
        'address,balance',
        `${OWNER},100`,
        '-----END STX BALANCES-----',
        '',
      ].join('\n'),
    );
    write('name_zonefiles.txt', `${H1}\n${zf('muneeb.id')}\n`);
    write(
      'subdomains.csv',
      'zonefile_hash,parent_zonefile_hash,fully_qualified_subdomain,owner,block_height,parent_zonefile_index,zonefile_offset,resolver\n' +
        `${HS},${H1},sub.muneeb.id,${BTC_OWNER},665577,12,3,https://registrar.example\n`,
    );
    write('subdomain_zonefiles.txt', `${HS}\n${zf('sub.muneeb.id')}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports namespaces, names with their zonefiles and subdomains into the genesis block, once', async () => {
    const svc = await startTestService();
    try {
      await expect(importBns(svc.db.sql, dir)).rejects.toThrow(/genesis block/);
      for (const l of readFixture('mainnet-out-of-order-microblock')) await deliver(svc, l.path, l.body);
      const progress: [string, number, number][] = [];
      expect(await importBns(svc.db.sql, dir, (...p) => progress.push(p))).toEqual({ namespaces: 1, names: 2, subdomains: 1, skipped: [] });
      expect(progress).toEqual([
        ['names', 2, 1],
        ['subdomains', 1, 1],
      ]);
      const [genesis] = await svc.db.sql<{ tx_id: string }[]>`
        SELECT t.tx_id FROM txs t JOIN blocks b USING (index_block_hash) WHERE b.canonical AND b.block_height = 1 ORDER BY t.tx_index LIMIT 1`;
      expect((await get(svc, '/v1/namespaces')).body).toEqual({ namespaces: ['id'] });
      expect((await get(svc, '/v1/namespaces/id/names')).body).toEqual(['ghost.id', 'muneeb.id']);
      expect((await get(svc, '/v1/names')).body).toEqual(['dang.btc', 'ghost.id', 'muneeb.id']);
      expect((await get(svc, '/v1/names/muneeb.id')).body).toEqual({
        address: OWNER,
        blockchain: 'stacks',
        expire_block: 52596,
        last_txid: genesis.tx_id,
        status: 'name-register',
        zonefile: unescaped('muneeb.id'),
        zonefile_hash: H1,
      });
      expect((await get(svc, '/v1/names/ghost.id/zonefile')).body).toEqual({ zonefile: '' });
      const stx = codec.bitcoinToStacksAddress(BTC_OWNER);
      expect((await get(svc, '/v1/names/sub.muneeb.id')).body).toEqual({
        address: stx,
        blockchain: 'stacks',
        last_txid: genesis.tx_id,
        resolver: 'https://registrar.example',
        status: 'registered_subdomain',
        zonefile: unescaped('sub.muneeb.id'),
        zonefile_hash: HS,
      });
      expect((await get(svc, '/v1/names/muneeb.id/subdomains')).body).toEqual(['sub.muneeb.id']);
      expect((await get(svc, '/v1/addresses/stacks/' + stx)).body).toEqual({ names: ['sub.muneeb.id'] });
      expect((await get(svc, '/v1/addresses/stacks/' + OWNER)).body).toEqual({ names: ['ghost.id', 'muneeb.id'] });
      expect(await importBns(svc.db.sql, dir)).toEqual({ namespaces: 0, names: 0, subdomains: 0, skipped: ['names', 'subdomains'] });
    } finally {
      await svc.stop();
    }
  });

  it('refuses a file that does not match its .sha256', async () => {
    const svc = await startTestService();
    try {
      for (const l of readFixture('mainnet-out-of-order-microblock')) await deliver(svc, l.path, l.body);
      writeFileSync(path.join(dir, 'name_zonefiles.txt'), 'tampered\n');
      await expect(importBns(svc.db.sql, dir)).rejects.toThrow(/sha256/);
      expect((await get(svc, '/v1/namespaces')).body).toEqual({ namespaces: [] });
    } finally {
      await svc.stop();
    }
  });
});
