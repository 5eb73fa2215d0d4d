/**
 * Transaction builders: each user transaction the generator makes (STX transfers, deploys, contract calls with print,
 * FT and NFT events, BNS v1 operations, coinbases), signed, with the receipt and events the node would report, valid
 * against the state of the branch being generated.
 */
import { createHash } from 'node:crypto';
import {
  AddressHashMode,
  AnchorMode,
  ClarityVersion,
  Cl,
  StacksTransactionWire,
  createCoinbasePayload,
  createSingleSigSpendingCondition,
  createStandardAuth,
  makeUnsignedContractCall,
  makeUnsignedContractDeploy,
  makeUnsignedSTXTokenTransfer,
  serializeCV,
  type ClarityValue,
} from '@stacks/transactions';
import { hex0x, sha256, type Rng } from './determinism.js';
import { sign } from './keys.js';
import { CONTRACT_ABI, CONTRACT_SOURCE } from './contract.js';
import type { Account, BranchState, BuiltTx, ChainSummary, ContractState, GeneratedTx, GeneratorOptions } from './types.js';

export const BNS_TESTNET = 'ST000000000000000000002AMW42H.bns';
export const BNS_NAMESPACE = 'pulse';

interface CostRange {
  runtime: [number, number];
  reads: [number, number];
}

const COSTS: Record<string, CostRange> = {
  token_transfer: { runtime: [0, 0], reads: [0, 0] },
  coinbase: { runtime: [0, 0], reads: [0, 0] },
  smart_contract: { runtime: [200_000, 900_000], reads: [5, 20] },
  contract_call: { runtime: [20_000, 400_000], reads: [2, 12] },
};

/** The node's serde JSON of a few Clarity values (the store reads raw_value; this only keeps the shape plausible). */
function nodeValueJson(v: ClarityValue): unknown {
  const c = v as { type: string; value?: unknown };
  switch (c.type) {
    case 'uint':
      return { UInt: Number(c.value) };
    case 'int':
      return { Int: Number(c.value) };
    case 'true':
    case 'false':
      return { Bool: c.type === 'true' };
    case 'ascii':
      return { Sequence: { String: { ASCII: { data: [...Buffer.from(String(c.value), 'ascii')] } } } };
    case 'address':
      return { Principal: { Standard: String(c.value) } };
    case 'tuple': {
      const data = c.value as Record<string, ClarityValue>;
      return { Tuple: { data_map: Object.fromEntries(Object.entries(data).map(([k, x]) => [k, nodeValueJson(x)])) } };
    }
    default:
      return { [c.type]: c.value ?? null };
  }
}

/** What the builders read and change of the generator: its options, random source, accounts, summary and branch. */
export interface TxContext {
  readonly opts: Required<GeneratorOptions>;
  readonly rng: Rng;
  readonly accounts: Account[];
  readonly summary: ChainSummary;
  /** the state of the branch being generated (a fork replaces it) */
  state(): BranchState;
  /** how many blocks the branch has (the boot parent included) */
  chainLength(): number;
}

export class TxBuilder {
  constructor(private readonly ctx: TxContext) {}

  private nextNonce(addr: string): number {
    const n = this.ctx.state().nonces[addr] ?? 0;
    this.ctx.state().nonces[addr] = n + 1;
    return n;
  }

  private fee(): number {
    return this.ctx.rng.int(180, 3000);
  }

  private costOf(type: string) {
    const c = COSTS[type];
    const reads = this.ctx.rng.int(c.reads[0], c.reads[1]);
    return {
      read_count: reads,
      read_length: reads * this.ctx.rng.int(0, 400),
      runtime: this.ctx.rng.int(c.runtime[0], c.runtime[1]),
      write_count: Math.floor(reads / 3),
      write_length: Math.floor(reads / 3) * this.ctx.rng.int(0, 120),
    };
  }

  private receipt(txId: string, rawTx: string, type: string, status: 'success' | 'abort_by_response', result: ClarityValue, abi: unknown = null) {
    return {
      txid: txId,
      tx_index: 0,
      raw_tx: rawTx,
      raw_result: hex0x(serializeCV(result)),
      status,
      execution_cost: this.costOf(type),
      contract_abi: abi,
      burnchain_op: null,
      vm_error: null,
      microblock_sequence: null as number | null,
      microblock_hash: null as string | null,
      microblock_parent_hash: null as string | null,
    };
  }

  async coinbaseTx(miner: Account, height: number): Promise<BuiltTx> {
    const nonce = this.nextNonce(miner.address);
    const tx = new StacksTransactionWire({
      payload: createCoinbasePayload(Buffer.from(sha256('coinbase', this.ctx.opts.seed, height, miner.address), 'hex')),
      auth: createStandardAuth(createSingleSigSpendingCondition(AddressHashMode.P2PKH, miner.pub, nonce, 0)),
      network: 'testnet',
    });
    tx.anchorMode = AnchorMode.OnChainOnly;
    const { rawTx, txId } = sign(tx, miner.key);
    const meta: GeneratedTx = { txId, rawTx, type: 'coinbase', sender: miner.address, nonce, fee: 0, status: 'success', eventCount: 0 };
    return { meta, receipt: this.receipt(txId, rawTx, 'coinbase', 'success', Cl.ok(Cl.bool(true))), events: [] };
  }

  async lowerFeeTwin(t: GeneratedTx): Promise<GeneratedTx> {
    const acct = this.ctx.accounts.find((a) => a.address === t.sender)!;
    const tx = await makeUnsignedSTXTokenTransfer({
      recipient: this.ctx.accounts[0].address === t.sender ? this.ctx.accounts[1].address : this.ctx.accounts[0].address,
      amount: 1n,
      fee: Math.max(1, Math.floor(t.fee / 2)),
      nonce: t.nonce,
      publicKey: acct.pub,
      network: 'testnet',
    });
    const { rawTx, txId } = sign(tx, acct.key);
    return { txId, rawTx, type: 'token_transfer', sender: t.sender, nonce: t.nonce, fee: Math.max(1, Math.floor(t.fee / 2)), status: 'success', eventCount: 0 };
  }

  /** One user transaction from a random account, valid against the branch state. */
  async userTx(opt: { offChain?: boolean; onlySimple?: boolean; firstBlock?: boolean } = {}): Promise<BuiltTx> {
    const rng = this.ctx.rng;
    const from = rng.pick(this.ctx.accounts);
    let to = rng.pick(this.ctx.accounts);
    if (to === from) to = this.ctx.accounts[(this.ctx.accounts.indexOf(from) + 1) % this.ctx.accounts.length];
    const r = rng.next();
    const contracts = this.ctx.state().contracts;
    const mustDeploy = opt.firstBlock || (contracts.length === 0 && !opt.onlySimple);
    if (!mustDeploy && (opt.onlySimple || r < 0.4 || contracts.length === 0)) return this.transfer(from, to, opt.offChain);
    if (mustDeploy || r < 0.42) return this.deploy(from);
    const c = rng.pick(contracts);
    if (r < 0.7) return this.ping(from, c);
    if (r < 0.85) {
      const holders = Object.entries(c.ft).filter(([, b]) => BigInt(b) > 0n);
      if (holders.length && rng.next() < 0.6) {
        const [holder, bal] = rng.pick(holders);
        const sender = this.ctx.accounts.find((a) => a.address === holder)!;
        const rcpt = to === sender ? from : to;
        const amount = BigInt(rng.int(1, Number(BigInt(bal) > 1_000_000n ? 1_000_000n : BigInt(bal))));
        return this.ftCall(sender, c, 'transfer-ft', amount, rcpt);
      }
      return this.ftCall(from, c, 'mint-ft', BigInt(rng.int(1, 5_000_000)), to);
    }
    const owned = Object.entries(c.nft);
    if (owned.length && rng.next() < 0.5) {
      const [id, owner] = rng.pick(owned);
      const sender = this.ctx.accounts.find((a) => a.address === owner)!;
      const rcpt = to === sender ? from : to;
      return this.nftCall(sender, c, 'transfer-nft', Number(id), rcpt);
    }
    return this.nftCall(from, c, 'mint-nft', c.nextNft, to);
  }

  private async transfer(from: Account, to: Account, offChain = false): Promise<BuiltTx> {
    const nonce = this.nextNonce(from.address);
    const fee = this.fee();
    const amount = BigInt(this.ctx.rng.int(1, 50_000_000));
    const memo = this.ctx.rng.next() < 0.3 ? `pulse ${nonce}` : '';
    const tx = await makeUnsignedSTXTokenTransfer({ recipient: to.address, amount, fee, nonce, memo, publicKey: from.pub, network: 'testnet' });
    // microblock txs need an anchor mode that allows off-chain; the builders' default (any) does
    if (offChain) tx.anchorMode = AnchorMode.Any;
    const { rawTx, txId } = sign(tx, from.key);
    const memoHex = Buffer.alloc(34);
    Buffer.from(memo, 'utf8').copy(memoHex);
    const events = [
      {
        txid: txId,
        type: 'stx_transfer_event',
        committed: true,
        stx_transfer_event: { sender: from.address, recipient: to.address, amount: amount.toString(), memo: memoHex.toString('hex') },
      },
    ];
    const meta: GeneratedTx = { txId, rawTx, type: 'token_transfer', sender: from.address, nonce, fee, status: 'success', eventCount: 1 };
    return { meta, receipt: this.receipt(txId, rawTx, 'token_transfer', 'success', Cl.ok(Cl.bool(true))), events };
  }

  private async deploy(from: Account): Promise<BuiltTx> {
    const nonce = this.nextNonce(from.address);
    const fee = this.fee() * 10;
    const name = `pulse-${this.ctx.state().contractSeq++}`;
    const tx = await makeUnsignedContractDeploy({
      contractName: name,
      codeBody: CONTRACT_SOURCE,
      clarityVersion: ClarityVersion.Clarity2,
      fee,
      nonce,
      publicKey: from.pub,
      network: 'testnet',
    });
    const { rawTx, txId } = sign(tx, from.key);
    const id = `${from.address}.${name}`;
    this.ctx.state().contracts.push({ id, counter: 0n, nextNft: 1, ft: {}, nft: {} });
    this.ctx.summary.contractsDeployed++;
    const meta: GeneratedTx = { txId, rawTx, type: 'smart_contract', sender: from.address, nonce, fee, status: 'success', eventCount: 0 };
    return { meta, receipt: this.receipt(txId, rawTx, 'smart_contract', 'success', Cl.ok(Cl.bool(true)), CONTRACT_ABI), events: [] };
  }

  private async call(from: Account, c: ContractState, fn: string, args: ClarityValue[]) {
    const nonce = this.nextNonce(from.address);
    const fee = this.fee();
    const [address, name] = c.id.split('.');
    const tx = await makeUnsignedContractCall({
      contractAddress: address,
      contractName: name,
      functionName: fn,
      functionArgs: args,
      fee,
      nonce,
      postConditionMode: 'allow',
      publicKey: from.pub,
      network: 'testnet',
    });
    const { rawTx, txId } = sign(tx, from.key);
    return { nonce, fee, rawTx, txId };
  }

  /** One BNS v1 operation as a signed contract call of the boot contract, with the node's events (GeneratorOptions.bns). */
  async bnsCall(): Promise<BuiltTx> {
    const s = this.ctx.state().bns;
    const rng = this.ctx.rng;
    const ns = BNS_NAMESPACE;
    const contract = { id: BNS_TESTNET } as ContractState;
    const buf = (x: string) => Cl.bufferFromUtf8(x);
    const nameCV = (name: string) => Cl.tuple({ name: buf(name), namespace: buf(ns) });
    // the node's serde JSON (`value`) is left out as null: the store reads raw_value
    const nftValue = (name: string) => ({ value: null, raw_value: hex0x(serializeCV(nameCV(name))) });
    const print = (value: ClarityValue) => ({
      type: 'contract_event',
      contract_event: { contract_identifier: BNS_TESTNET, topic: 'print', value: null, raw_value: hex0x(serializeCV(value)) },
    });
    const namePrint = (op: string, name: string, hash: string, sender: string) =>
      print(
        Cl.tuple({
          attachment: Cl.tuple({
            hash: Cl.bufferFromHex(hash),
            'attachment-index': Cl.uint(s.seq),
            metadata: Cl.tuple({ name: buf(name), namespace: buf(ns), op: Cl.stringAscii(op), 'tx-sender': Cl.standardPrincipal(sender) }),
          }),
        }),
      );
    const attachment = (op: string, name: string, hash: string, zonefile: string) => ({
      attachment_index: String(s.seq),
      content_hash: '0x' + hash,
      contract_id: BNS_TESTNET,
      metadata: hex0x(serializeCV(Cl.tuple({ op: Cl.stringAscii(op), name: buf(name), namespace: buf(ns) }))),
      content: '0x' + Buffer.from(zonefile, 'utf8').toString('hex'),
    });
    const built = async (from: Account, fn: string, args: ClarityValue[], events: Record<string, unknown>[], att?: Record<string, unknown>): Promise<BuiltTx> => {
      const { nonce, fee, rawTx, txId } = await this.call(from, contract, fn, args);
      const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${BNS_TESTNET}::${fn}`, status: 'success', eventCount: events.length };
      return {
        meta,
        receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.bool(true))),
        events: events.map((e) => ({ txid: txId, committed: true, ...e })),
        ...(att ? { attachment: att } : {}),
      };
    };
    const zonefileHash = (z: string) => createHash('sha256').update(z).digest('hex').slice(0, 40);

    if (!s.ready) {
      s.ready = true;
      const from = this.ctx.accounts[0];
      const ready = Cl.tuple({
        namespace: buf(ns),
        status: Cl.stringAscii('ready'),
        properties: Cl.tuple({
          'launched-at': Cl.some(Cl.uint(this.ctx.chainLength())),
          lifetime: Cl.uint(5000),
          'revealed-at': Cl.uint(Math.max(0, this.ctx.chainLength() - 1)),
          'namespace-import': Cl.standardPrincipal(from.address),
          'price-function': Cl.tuple({
            base: Cl.uint(4),
            coeff: Cl.uint(250),
            'no-vowel-discount': Cl.uint(4),
            'nonalpha-discount': Cl.uint(4),
            buckets: Cl.list([6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0].map((b) => Cl.uint(b))),
          }),
        }),
      });
      return built(from, 'namespace-ready', [buf(ns)], [print(ready)]);
    }
    s.seq++;
    // a random live name: a few picks from every name ever registered (revoked ones are a minority)
    let picked: string | undefined;
    for (let i = 0; i < 16 && s.fqns.length && !picked; i++) {
      const f = rng.pick(s.fqns);
      if (!s.names[f].revoked) picked = f;
    }
    const r = rng.next();
    if (!picked || r < 0.4) {
      const owner = rng.pick(this.ctx.accounts);
      const name = `n${s.seq}`;
      const zonefile = `$ORIGIN ${name}.${ns}\n$TTL 3600\n_http._tcp IN URI 10 1 "https://gaia.example/${name}/profile.json"\n`;
      const hash = zonefileHash(zonefile);
      s.names[`${name}.${ns}`] = { owner: owner.address, revoked: false, zonefileHash: hash };
      s.fqns.push(`${name}.${ns}`);
      return built(
        owner,
        'name-register',
        [buf(ns), buf(name), Cl.bufferFromHex('00'.repeat(20)), Cl.bufferFromHex(hash)],
        [
          { type: 'nft_mint_event', nft_mint_event: { asset_identifier: `${BNS_TESTNET}::names`, recipient: owner.address, ...nftValue(name) } },
          namePrint('name-register', name, hash, owner.address),
        ],
        attachment('name-register', name, hash, zonefile),
      );
    }
    const fqn = picked;
    const n = s.names[fqn];
    const name = fqn.slice(0, -(ns.length + 1));
    const owner = this.ctx.accounts.find((a) => a.address === n.owner)!;
    if (r < 0.6) {
      const subOwner = rng.pick(this.ctx.accounts).address;
      const sub = `$ORIGIN s${s.seq}\n$TTL 3600\n_http._tcp URI 10 1 "https://gaia.example/s${s.seq}/profile.json"\n`;
      const zonefile =
        `$ORIGIN ${fqn}\n$TTL 3600\n_resolver IN URI 10 1 "https://resolver.example"\n` +
        `s${s.seq} TXT "owner=${subOwner}" "seqn=0" "parts=1" "zf0=${Buffer.from(sub).toString('base64')}"\n`;
      const hash = zonefileHash(zonefile);
      n.zonefileHash = hash;
      return built(owner, 'name-update', [buf(ns), buf(name), Cl.bufferFromHex(hash)], [namePrint('name-update', name, hash, owner.address)], attachment('name-update', name, hash, zonefile));
    }
    if (r < 0.8) {
      let to = rng.pick(this.ctx.accounts);
      if (to === owner) to = this.ctx.accounts[(this.ctx.accounts.indexOf(owner) + 1) % this.ctx.accounts.length];
      n.owner = to.address;
      return built(
        owner,
        'name-transfer',
        [buf(ns), buf(name), Cl.standardPrincipal(to.address), Cl.none()],
        [
          { type: 'nft_transfer_event', nft_transfer_event: { asset_identifier: `${BNS_TESTNET}::names`, sender: owner.address, recipient: to.address, ...nftValue(name) } },
          namePrint('name-transfer', name, '', owner.address),
        ],
      );
    }
    if (r < 0.92) {
      // a renewal without zonefile hash: the contract prints nothing
      return built(owner, 'name-renewal', [buf(ns), buf(name), Cl.uint(1000), Cl.none(), Cl.none()], []);
    }
    n.revoked = true;
    return built(owner, 'name-revoke', [buf(ns), buf(name)], [namePrint('name-revoke', name, '', owner.address)]);
  }

  private async ping(from: Account, c: ContractState): Promise<BuiltTx> {
    const fail = this.ctx.rng.next() < 0.05;
    const n = fail ? 0n : BigInt(this.ctx.rng.int(1, 1000));
    const { nonce, fee, rawTx, txId } = await this.call(from, c, 'ping', [Cl.uint(n)]);
    const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${c.id}::ping`, status: fail ? 'abort_by_response' : 'success', eventCount: 0 };
    if (fail) return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'abort_by_response', Cl.error(Cl.uint(1))), events: [] };
    c.counter += n;
    const printed = Cl.tuple({ event: Cl.stringAscii('ping'), n: Cl.uint(n), sender: Cl.standardPrincipal(from.address) });
    const events = [
      {
        txid: txId,
        type: 'contract_event',
        committed: true,
        contract_event: { contract_identifier: c.id, topic: 'print', value: nodeValueJson(printed), raw_value: hex0x(serializeCV(printed)) },
      },
    ];
    meta.eventCount = 1;
    return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.uint(c.counter))), events };
  }

  private async ftCall(from: Account, c: ContractState, fn: 'mint-ft' | 'transfer-ft', amount: bigint, to: Account): Promise<BuiltTx> {
    const { nonce, fee, rawTx, txId } = await this.call(from, c, fn, [Cl.uint(amount), Cl.standardPrincipal(to.address)]);
    const asset = `${c.id}::pulse-token`;
    const add = (addr: string, d: bigint) => {
      c.ft[addr] = (BigInt(c.ft[addr] ?? '0') + d).toString();
    };
    let ev: Record<string, unknown>;
    if (fn === 'mint-ft') {
      add(to.address, amount);
      ev = { type: 'ft_mint_event', ft_mint_event: { asset_identifier: asset, recipient: to.address, amount: amount.toString() } };
    } else {
      add(from.address, -amount);
      add(to.address, amount);
      ev = { type: 'ft_transfer_event', ft_transfer_event: { asset_identifier: asset, sender: from.address, recipient: to.address, amount: amount.toString() } };
    }
    const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${c.id}::${fn}`, status: 'success', eventCount: 1 };
    return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.bool(true))), events: [{ txid: txId, committed: true, ...ev }] };
  }

  private async nftCall(from: Account, c: ContractState, fn: 'mint-nft' | 'transfer-nft', id: number, to: Account): Promise<BuiltTx> {
    const { nonce, fee, rawTx, txId } = await this.call(from, c, fn, [Cl.uint(id), Cl.standardPrincipal(to.address)]);
    const asset = `${c.id}::pulse-nft`;
    const value = Cl.uint(id);
    const v = { value: nodeValueJson(value), raw_value: hex0x(serializeCV(value)) };
    let ev: Record<string, unknown>;
    if (fn === 'mint-nft') {
      c.nextNft++;
      ev = { type: 'nft_mint_event', nft_mint_event: { asset_identifier: asset, recipient: to.address, ...v } };
    } else {
      ev = { type: 'nft_transfer_event', nft_transfer_event: { asset_identifier: asset, sender: from.address, recipient: to.address, ...v } };
    }
    c.nft[String(id)] = to.address;
    const meta: GeneratedTx = { txId, rawTx, type: 'contract_call', sender: from.address, nonce, fee, call: `${c.id}::${fn}`, status: 'success', eventCount: 1 };
    return { meta, receipt: this.receipt(txId, rawTx, 'contract_call', 'success', Cl.ok(Cl.bool(true))), events: [{ txid: txId, committed: true, ...ev }] };
  }
}
