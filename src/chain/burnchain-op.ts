/**
 * Burnchain-operation transactions: STX operations sent through Bitcoin (transfer-stx, stack-stx, delegate-stx, …).
 * The node reports them in /new_block with `raw_tx: "0x00"`, the Bitcoin txid as `txid` and (newer nodes) a
 * `burnchain_op` object. The reference rebuilds a Stacks transaction for each from the tx's events, and this module
 * does the same, producing the DecodedTx the store keeps for a raw transaction:
 *   - fee 0, nonce 0, standard (not sponsored) auth, anchor mode `any`, post-condition mode `allow`, no post conditions;
 *   - an STX transfer event → token_transfer (sender/recipient/amount of the event, memo `0x`);
 *   - a pox-4 `stack_stx` op with a signer key → contract_call `<boot>.pox-4::stack-stx` with the op's 8 arguments;
 *   - an STX lock event → contract_call `<boot>.<lock contract>::stack-stx` (amount-ustx, pox-addr, start-burn-height,
 *     lock-period) built from the tx result, the pox stack-stx event's pox-addr or the stacker's own address;
 *   - a pox `delegate-stx` event → contract_call `::delegate-stx` (from the `delegate_stx` op on pox-4);
 *   - subnet (L2) deposits from the L1 chain, which a subnet node reports with `raw_tx` 0x00 and (for deposits) no
 *     burnchain_op at all:
 *       an NFT mint event → contract_call `<asset contract>::deposit-from-burnchain (id, recipient)`, sent by the
 *       recipient; an FT mint event → the same call with (amount, recipient); an STX mint event → token_transfer of
 *       the minted amount from the boot address to the recipient; a `register_asset` op with a print event of the
 *       boot `subnet` contract → contract_call `<boot>.subnet::register-asset-contract` (asset-type, l1-contract,
 *       l2-contract, burnchain-txid of the print event), sent by the boot address.
 * A tx without any event is skipped (null), as the reference does. Where the reference gives up (throws, which makes
 * it answer 500 and the node retry forever) this module falls back on the `burnchain_op` object, or skips the tx.
 * Pure; no I/O.
 */
import type { DecodedTx, FunctionArgJson, TxStaticJson } from './tx.js';
import { clarityTypeName, clarityValue, normalizeHex } from './clarity.js';
import { codec } from './native.js';
import {
  BOOT_ADDRESS,
  addressNetwork,
  btcAddressPoxTuple,
  cv,
  decodePoxPrintEvent,
  poxContractName,
  stacksAddressPoxTuple,
  type Network,
  type PoxEvent,
} from './pox.js';

/** The raw_tx the node sends for a burnchain operation (exactly `0x00`, as the reference tests it). */
export function isBurnchainOpRawTx(rawTx: string): boolean {
  return rawTx === '0x00';
}

/** `{address, address_hash_bytes, address_version}` as the node serialises a Stacks address in a burnchain op. */
export interface BurnOpAddress {
  address: string;
  address_hash_bytes?: string;
  address_version?: number;
}

/** The burnchain_op shapes the node sends (stacks-core blockstack_op_to_json); every field treated as optional. */
export interface BurnchainOpJson {
  transfer_stx?: {
    sender?: BurnOpAddress;
    recipient?: BurnOpAddress;
    transfered_ustx?: number | string;
    memo?: string;
    burn_block_height?: number;
    burn_txid?: string;
  };
  stack_stx?: {
    sender?: BurnOpAddress;
    reward_addr?: string;
    stacked_ustx?: number | string;
    num_cycles?: number;
    burn_block_height?: number;
    signer_key?: string | null;
    max_amount?: number | string | null;
    auth_id?: number | string | null;
  };
  delegate_stx?: {
    sender?: BurnOpAddress;
    delegate_to?: BurnOpAddress;
    delegated_ustx?: number | string;
    reward_addr?: [number, string] | null;
    until_burn_height?: number | null;
  };
  pre_stx?: { output?: BurnOpAddress };
  /** Subnet nodes: an L1 asset contract registered with the subnet. */
  register_asset?: {
    asset_type?: string;
    l1_contract_id?: string;
    l2_contract_id?: string;
    burn_header_hash?: string;
    txid?: string;
  };
  vote_for_aggregate_key?: {
    sender?: BurnOpAddress;
    aggregate_key?: string;
    round?: number;
    reward_cycle?: number;
    signer_index?: number;
    signer_key?: string;
  };
  [other: string]: unknown;
}

/** A node event as far as this module reads it. */
export interface BurnOpNodeEvent {
  txid: string;
  type: string;
  [payload: string]: unknown;
}

export interface BurnchainOpTxInput {
  txid: string;
  raw_result: string;
  burnchain_op?: BurnchainOpJson | Record<string, unknown> | null;
  /** burn_block_height of the block (used for the lock period of pre-pox-4 stack-stx), -1 when unknown */
  burnBlockHeight: number;
  /** every event of the message (any tx; filtered by txid here) */
  events: readonly BurnOpNodeEvent[];
}

// ---------------------------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const strOf = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** An integer amount from a JSON number or decimal string (the node sends u128 amounts as JSON numbers). */
function intOf(v: unknown): bigint | null {
  if (typeof v === 'number' && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  if (typeof v === 'bigint') return v;
  return null;
}

function addrOf(v: unknown): string | null {
  if (!isObj(v)) return null;
  const a = strOf(v.address);
  return a && codec.isValidStacksAddress(a) ? a : null;
}

function payload(e: BurnOpNodeEvent): Obj {
  const p = e[e.type];
  return isObj(p) ? p : {};
}

interface CallSpec {
  sender: string;
  contractId: string;
  functionName: string;
  args: string[];
}
interface TransferSpec {
  sender: string;
  recipient: string;
  amount: bigint;
}

function baseJson(txId: string, sender: string): TxStaticJson {
  return {
    tx_id: txId,
    nonce: 0,
    fee_rate: '0',
    sender_address: sender,
    sponsored: false,
    post_condition_mode: 'allow',
    post_conditions: [],
    anchor_mode: 'any',
    tx_type: 'token_transfer',
  };
}

function common(txId: string, sender: string) {
  return {
    txId,
    rawTx: '0x00',
    nonce: 0,
    feeRate: '0',
    senderAddress: sender,
    sponsored: false,
    sponsorAddress: null,
    sponsorNonce: null,
    anchorMode: 'any' as const,
    postConditionMode: 'allow' as const,
    smartContractContractId: null,
    smartContractSource: null,
    byteSize: 1,
  };
}

function transferTx(txId: string, t: TransferSpec): DecodedTx {
  const api = baseJson(txId, t.sender);
  api.tx_type = 'token_transfer';
  api.token_transfer = { recipient_address: t.recipient, amount: t.amount.toString(), memo: '0x' };
  return {
    ...common(txId, t.sender),
    txType: 'token_transfer',
    payloadTypeId: 0,
    tokenTransferRecipient: t.recipient,
    tokenTransferAmount: t.amount.toString(),
    contractCallContractId: null,
    contractCallFunctionName: null,
    api,
  };
}

function callTx(txId: string, c: CallSpec): DecodedTx {
  const api = baseJson(txId, c.sender);
  api.tx_type = 'contract_call';
  api.contract_call = {
    contract_id: c.contractId,
    function_name: c.functionName,
    function_signature: '',
    function_args: c.args.map((hex): FunctionArgJson => {
      const v = clarityValue(hex);
      return { hex: v.hex, repr: v.repr, name: '', type: clarityTypeName(v.hex) };
    }),
  };
  return {
    ...common(txId, c.sender),
    txType: 'contract_call',
    payloadTypeId: 2,
    tokenTransferRecipient: null,
    tokenTransferAmount: null,
    contractCallContractId: c.contractId,
    contractCallFunctionName: c.functionName,
    api,
  };
}

/** `(ok (tuple (lock-amount uint) (stacker principal) (unlock-burn-height uint)))` of a stack-stx result. */
function stackStxResult(rawResult: string): { lockAmount: bigint; unlockBurnHeight: bigint; stacker: string | null } | null {
  try {
    const r = codec.decodeClarityValue(normalizeHex(rawResult)) as unknown as { type_id: number; value?: Obj };
    if (r.type_id !== 7 || !isObj(r.value) || r.value.type_id !== 12) return null;
    const d = r.value.data as Record<string, Obj>;
    const lock = d['lock-amount'];
    const unlock = d['unlock-burn-height'];
    if (!lock || lock.type_id !== 1 || !unlock || unlock.type_id !== 1) return null;
    const st = d['stacker'];
    const stacker = st && (st.type_id === 5 || st.type_id === 6) ? (strOf(st.address) ?? null) : null;
    return { lockAmount: BigInt(lock.value as string), unlockBurnHeight: BigInt(unlock.value as string), stacker };
  } catch {
    return null;
  }
}

function poxAddrArg(btc: unknown, fallbackStacker: string): string {
  const s = strOf(btc);
  return (s && btcAddressPoxTuple(s)) ?? stacksAddressPoxTuple(fallbackStacker);
}

function bootId(network: Network, name: string): string {
  return `${BOOT_ADDRESS[network]}.${name}`;
}

function safeNetwork(address: string): Network {
  try {
    return addressNetwork(address);
  } catch {
    return 'testnet';
  }
}

function hexOrNull(v: unknown): string | null {
  const s = strOf(v);
  if (!s || !/^(0x)?([0-9a-fA-F]{2})+$/.test(s)) return null;
  return normalizeHex(s);
}

/** pox-4 `stack-stx` rebuilt from a stack_stx op (8 args, as the reference). */
function pox4StackStxFromOp(op: NonNullable<BurnchainOpJson['stack_stx']>): CallSpec | null {
  const sender = addrOf(op.sender);
  const amount = intOf(op.stacked_ustx);
  if (!sender || amount === null) return null;
  const signerKey = hexOrNull(op.signer_key);
  return {
    sender,
    contractId: bootId(safeNetwork(sender), 'pox-4'),
    functionName: 'stack-stx',
    args: [
      cv.uint(amount),
      poxAddrArg(op.reward_addr, sender),
      cv.uint(intOf(op.burn_block_height) ?? 0n),
      cv.uint(intOf(op.num_cycles) ?? 0n),
      cv.none(),
      signerKey ? cv.buffer(signerKey) : cv.buffer('0x'),
      cv.uint(intOf(op.max_amount) ?? 0n),
      cv.uint(intOf(op.auth_id) ?? 0n),
    ],
  };
}

/** `delegate-stx` rebuilt from a delegate_stx op (pox-4 form of the reference: until-burn-ht and pox-addr as some). */
function delegateStxFromOp(op: NonNullable<BurnchainOpJson['delegate_stx']>, contractName: string): CallSpec | null {
  const sender = addrOf(op.sender);
  const delegateTo = addrOf(op.delegate_to);
  const amount = intOf(op.delegated_ustx);
  if (!sender || !delegateTo || amount === null) return null;
  const until = intOf(op.until_burn_height);
  const reward = Array.isArray(op.reward_addr) ? strOf(op.reward_addr[1]) : null;
  const rewardTuple = reward ? btcAddressPoxTuple(reward) : null;
  return {
    sender,
    contractId: bootId(safeNetwork(sender), contractName),
    functionName: 'delegate-stx',
    args: [
      cv.uint(amount),
      cv.principal(delegateTo),
      until === null ? cv.none() : cv.some(cv.uint(until)),
      rewardTuple ? cv.some(rewardTuple) : cv.none(),
    ],
  };
}

/** A standard (`ST…`) or contract (`ST….name`) principal whose address part is valid. */
function isPrincipal(p: string | null): p is string {
  if (!p) return false;
  const parts = p.split('.');
  if (parts.length > 2 || (parts.length === 2 && !/^[a-zA-Z]([a-zA-Z0-9]|[-_])*$/.test(parts[1]))) return false;
  return codec.isValidStacksAddress(parts[0]);
}

/** The contract id `addr.name` of an asset identifier `addr.name::asset`, or null when malformed. */
function assetContractId(assetId: string | null): string | null {
  if (!assetId) return null;
  const contractId = assetId.split('::')[0];
  return contractId.split('.').length === 2 && isPrincipal(contractId) ? contractId : null;
}

/** A serialized Clarity value as normalised hex once the codec has decoded it; null when it does not decode. */
function decodableClarity(hex: string | null): string | null {
  if (!hex) return null;
  try {
    return normalizeHex(codec.decodeClarityValue(normalizeHex(hex)).hex);
  } catch {
    return null;
  }
}

/** The `burnchain-txid` buffer of the subnet contract's register-asset print event (a tuple), or null. */
function registerAssetBurnTxid(rawValue: string | null): string | null {
  if (!rawValue) return null;
  try {
    const v = codec.decodeClarityValue(normalizeHex(rawValue)) as unknown as { type_id: number; data?: Record<string, Obj> };
    const txid = v.type_id === 12 && v.data ? v.data['burnchain-txid'] : undefined;
    return txid && txid.type_id === 2 ? hexOrNull(txid.buffer) : null;
  } catch {
    return null;
  }
}

/** The boot contracts a subnet node reports register-asset print events from. */
const SUBNET_CONTRACT_IDS: readonly string[] = [`${BOOT_ADDRESS.mainnet}.subnet`, `${BOOT_ADDRESS.testnet}.subnet`];

/**
 * Subnet deposits from the L1 chain, in the reference's order: NFT mint, FT mint, STX mint, then a register_asset op
 * with the subnet contract's print event. Null when none applies (or its data is malformed).
 */
function subnetDepositTx(txId: string, events: readonly BurnOpNodeEvent[], op: BurnchainOpJson): DecodedTx | null {
  const byType = (t: string) => events.find((e) => e.type === t);
  const nftMint = byType('nft_mint_event');
  if (nftMint) {
    const p = payload(nftMint);
    const recipient = strOf(p.recipient);
    const contractId = assetContractId(strOf(p.asset_identifier));
    const id = decodableClarity(strOf(p.raw_value));
    if (isPrincipal(recipient) && contractId && id) {
      return callTx(txId, { sender: recipient, contractId, functionName: 'deposit-from-burnchain', args: [id, cv.principal(recipient)] });
    }
  }
  const ftMint = byType('ft_mint_event');
  if (ftMint) {
    const p = payload(ftMint);
    const recipient = strOf(p.recipient);
    const contractId = assetContractId(strOf(p.asset_identifier));
    const amount = intOf(p.amount);
    if (isPrincipal(recipient) && contractId && amount !== null) {
      return callTx(txId, {
        sender: recipient,
        contractId,
        functionName: 'deposit-from-burnchain',
        args: [cv.uint(amount), cv.principal(recipient)],
      });
    }
  }
  const stxMint = byType('stx_mint_event');
  if (stxMint) {
    const p = payload(stxMint);
    const recipient = strOf(p.recipient);
    const amount = intOf(p.amount);
    // the reference sends it from the boot address of the chain's network; that of the recipient here
    if (isPrincipal(recipient) && amount !== null) {
      return transferTx(txId, { sender: BOOT_ADDRESS[safeNetwork(recipient)], recipient, amount });
    }
  }
  const reg = op.register_asset;
  if (isObj(reg)) {
    const print = events.find((e) => {
      if (e.type !== 'contract_event') return false;
      const p = payload(e);
      return p.topic === 'print' && SUBNET_CONTRACT_IDS.includes(strOf(p.contract_identifier) ?? '');
    });
    const assetType = strOf(reg.asset_type);
    const l1 = strOf(reg.l1_contract_id);
    const l2 = strOf(reg.l2_contract_id);
    if (print && (assetType === 'ft' || assetType === 'nft') && isPrincipal(l1) && isPrincipal(l2)) {
      const p = payload(print);
      const contractId = strOf(p.contract_identifier)!;
      const burnTxid = registerAssetBurnTxid(strOf(p.raw_value));
      if (burnTxid) {
        return callTx(txId, {
          sender: contractId.split('.')[0],
          contractId,
          functionName: 'register-asset-contract',
          args: [cv.stringAscii(assetType), cv.principal(l1), cv.principal(l2), cv.buffer(burnTxid)],
        });
      }
    }
  }
  return null;
}

/**
 * The Stacks transaction the reference shows for a burnchain-operation tx (`raw_tx` 0x00), or null when the tx is
 * skipped (no events, or nothing to rebuild it from).
 */
export function burnchainOpTx(input: BurnchainOpTxInput): DecodedTx | null {
  const txId = normalizeHex(input.txid);
  const events = input.events.filter((e) => typeof e.txid === 'string' && normalizeHex(e.txid) === txId);
  if (events.length === 0) return null;
  const op: BurnchainOpJson = isObj(input.burnchain_op) ? (input.burnchain_op as BurnchainOpJson) : {};

  const byType = (t: string) => events.find((e) => e.type === t);
  const transfer = byType('stx_transfer_event');
  const lock = byType('stx_lock_event');
  let pox: { event: PoxEvent; contract: string } | undefined;
  for (const e of events) {
    if (e.type !== 'contract_event') continue;
    const p = payload(e);
    const contract = strOf(p.contract_identifier);
    const raw = strOf(p.raw_value);
    if (!contract || !raw || p.topic !== 'print' || !poxContractName(contract)) continue;
    const decoded = decodePoxPrintEvent(raw);
    if (decoded) {
      pox = { event: decoded, contract: contract.split('.')[1] };
      break;
    }
  }

  // 1. an STX transfer event → token transfer
  if (transfer) {
    const p = payload(transfer);
    const sender = strOf(p.sender);
    const recipient = strOf(p.recipient);
    const amount = intOf(p.amount);
    if (sender && recipient && amount !== null) return transferTx(txId, { sender, recipient, amount });
  }
  // 2. pox-4 stack-stx op (it carries a signer key)
  if (isObj(op.stack_stx) && op.stack_stx.signer_key) {
    const spec = pox4StackStxFromOp(op.stack_stx);
    if (spec) return callTx(txId, spec);
  }
  // 3. an STX lock event → stack-stx on the lock's contract
  if (lock) {
    const p = payload(lock);
    const locked = strOf(p.locked_address);
    if (locked && codec.isValidStacksAddress(locked.split('.')[0])) {
      const result = stackStxResult(input.raw_result);
      const lockAmount = result?.lockAmount ?? intOf(p.locked_amount) ?? 0n;
      const unlock = result?.unlockBurnHeight ?? intOf(p.unlock_height) ?? 0n;
      const network = safeNetwork(locked);
      const cycle = network === 'mainnet' ? 2100n : 50n;
      const burnHeight = BigInt(input.burnBlockHeight);
      const period = (unlock - burnHeight) / cycle;
      const contractName = strOf(p.contract_identifier)?.split('.')[1] ?? 'pox';
      const stacker = result?.stacker ?? locked;
      const poxAddr =
        pox?.event.name === 'stack-stx' && pox.event.poxAddrTupleHex ? pox.event.poxAddrTupleHex : stacksAddressPoxTuple(stacker.split('.')[0]);
      return callTx(txId, {
        sender: locked,
        contractId: bootId(network, contractName),
        functionName: 'stack-stx',
        args: [cv.uint(lockAmount), poxAddr, cv.uint(burnHeight < 0n ? 0n : burnHeight), cv.uint(period < 0n ? 0n : period)],
      });
    }
  }
  // 4./5. a delegate-stx pox event
  if (pox && pox.event.name === 'delegate-stx') {
    if (pox.contract === 'pox-4' && isObj(op.delegate_stx)) {
      const spec = delegateStxFromOp(op.delegate_stx, pox.contract);
      if (spec) return callTx(txId, spec);
    }
    const d = pox.event.data;
    const delegateTo = typeof d.delegate_to === 'string' ? d.delegate_to : null;
    if (delegateTo && codec.isValidStacksAddress(pox.event.stacker.split('.')[0])) {
      const until = typeof d.unlock_burn_height === 'bigint' ? d.unlock_burn_height : null;
      return callTx(txId, {
        sender: pox.event.stacker,
        contractId: bootId(safeNetwork(pox.event.stacker), pox.contract),
        functionName: 'delegate-stx',
        args: [
          cv.uint(d.amount_ustx as bigint),
          cv.principal(delegateTo),
          until ? cv.some(cv.uint(until)) : cv.none(),
          pox.event.poxAddrTupleHex ? cv.some(pox.event.poxAddrTupleHex) : cv.none(),
        ],
      });
    }
  }

  // 6.-9. subnet deposits / asset registration from the L1 chain
  const subnet = subnetDepositTx(txId, events, op);
  if (subnet) return subnet;

  // Beyond the reference (which fails here): rebuild from the burnchain_op object itself.
  if (isObj(op.transfer_stx)) {
    const t = op.transfer_stx;
    const sender = addrOf(t.sender);
    const recipient = addrOf(t.recipient);
    const amount = intOf(t.transfered_ustx);
    if (sender && recipient && amount !== null) return transferTx(txId, { sender, recipient, amount });
  }
  if (isObj(op.stack_stx)) {
    const spec = pox4StackStxFromOp(op.stack_stx);
    if (spec) return callTx(txId, spec);
  }
  if (isObj(op.delegate_stx)) {
    const spec = delegateStxFromOp(op.delegate_stx, pox?.contract ?? 'pox-4');
    if (spec) return callTx(txId, spec);
  }
  if (isObj(op.vote_for_aggregate_key)) {
    const v = op.vote_for_aggregate_key;
    const sender = addrOf(v.sender);
    const key = hexOrNull(v.aggregate_key);
    if (sender && key) {
      return callTx(txId, {
        sender,
        contractId: bootId(safeNetwork(sender), 'signers-voting'),
        functionName: 'vote-for-aggregate-public-key',
        args: [cv.uint(intOf(v.signer_index) ?? 0n), cv.buffer(key), cv.uint(intOf(v.round) ?? 0n), cv.uint(intOf(v.reward_cycle) ?? 0n)],
      });
    }
  }
  return null;
}
