/**
 * Rosetta (Mesh) operations of a Stacks transaction, as the reference v8.13.6 lists them (its rosetta-helpers.ts
 * getOperations): pure functions over rows, no I/O, so they are unit-tested without a database.
 *
 * Per tx type:
 *  - token_transfer: fee, sender (-amount), receiver (+amount); the tx's own STX transfer event adds nothing;
 *  - contract_call: fee, then the call (`stack_stx` / `delegate_stx` / `revoke_delegate_stx` for those PoX functions,
 *    with their arguments decoded; `contract_call` with the call's contract / function / arguments otherwise);
 *  - smart_contract: fee, deploy; coinbase: coinbase, then the miner rewards that matured in the block, then the STX
 *    that unlocked at the block's burn height; poison_microblock: one op; tenure_change: one op with its payload;
 *  then the tx's events (not for block 1, whose boot events the reference leaves out): STX transfers (sender +
 *  receiver), mints, burns, stx_lock; FT events only when FT metadata (symbol, decimals) is known; NFT and print events
 *  add nothing.
 * The sum of a block's STX amounts (fee, transfers, mint, burn, miner_reward) is the STX moved; stx_lock states an
 * account's locked amount (absolute, not a delta: a stack-extend repeats it) and stx_unlock releases it (stxDeltas).
 */
import { codec } from './native.js';
import { poxAddressToBtc } from './btc-address.js';
import type { ContractCallJson } from './tx.js';

export const STX_CURRENCY = { decimals: 6, symbol: 'STX' } as const;

export interface RosettaAmount {
  value: string;
  currency: { decimals: number; symbol: string };
  metadata?: Record<string, unknown>;
}

export interface RosettaOperation {
  operation_identifier: { index: number };
  related_operations?: { index: number }[];
  type: string;
  status: string;
  account?: { address: string };
  amount?: RosettaAmount;
  coin_change?: { coin_action: 'coin_spent' | 'coin_created'; coin_identifier: { identifier: string } };
  metadata?: Record<string, unknown>;
}

export interface RosettaTransaction {
  transaction_identifier: { hash: string };
  operations: RosettaOperation[];
  metadata?: { memo: string };
}

/** What a tx contributes (its stored static JSON with the ABI joined in, and its result). */
export interface OpsTx {
  tx_id: string;
  tx_type: string;
  /** success | abort_by_response | abort_by_post_condition; '' for a mempool tx */
  status: string;
  fee_rate: string;
  sender_address: string;
  token_transfer?: { recipient_address: string; amount: string; memo: string };
  contract_call?: ContractCallJson;
  tenure_change_payload?: Record<string, unknown>;
  /** the tx result (Clarity hex); '' for a mempool tx */
  raw_result: string;
}

export interface OpsEvent {
  event_type: string;
  asset_event_type: string | null;
  sender: string | null;
  recipient: string | null;
  amount: string | null;
  /** memo of an STX transfer event (0x hex) */
  memo: string | null;
  locked_address: string | null;
  unlock_height: number | null;
  asset_identifier: string | null;
}

export interface OpsMinerReward {
  recipient: string;
  coinbase_amount: string;
  tx_fees_anchored: string;
  tx_fees_streamed_confirmed: string;
  tx_fees_streamed_produced: string;
}

export interface OpsUnlock {
  tx_id: string;
  stacker_address: string;
  unlocked_amount: string;
}

export type FtMetadata = (assetIdentifier: string) => { symbol: string; decimals: number } | undefined;

export interface OpsContext {
  network: 'mainnet' | 'testnet';
  events?: OpsEvent[];
  minerRewards?: OpsMinerReward[];
  unlocks?: OpsUnlock[];
  /** FT symbol and decimals, when known (the reference reads them from the node when STACKS_API_ENABLE_FT_METADATA) */
  ftMetadata?: FtMetadata;
}

/** The text of a 34-byte memo without its trailing NUL padding; null when empty. */
export function parseMemo(memoHex: string | null | undefined): string | null {
  if (!memoHex) return null;
  let b = Buffer.from(memoHex.replace(/^0x/, ''), 'hex');
  let end = b.length;
  while (end > 0 && b[end - 1] === 0) end--;
  b = b.subarray(0, end);
  return b.length === 0 ? null : b.toString('utf8');
}

const neg = (v: string) => (0n - BigInt(v)).toString(10);
const pos = (v: string) => BigInt(v).toString(10);

const POX_CONTRACT_NAMES = new Set(['pox', 'pox-2', 'pox-3', 'pox-4']);
const BOOT_ADDRESSES = new Set(['SP000000000000000000002Q6VF78', 'ST000000000000000000002AMW42H']);
function isPoxContract(id: string): boolean {
  const [addr, name] = id.split('.');
  return BOOT_ADDRESSES.has(addr) && POX_CONTRACT_NAMES.has(name);
}

function feeOp(tx: OpsTx): RosettaOperation {
  return {
    operation_identifier: { index: 0 },
    type: 'fee',
    status: tx.status,
    account: { address: tx.sender_address },
    amount: { value: neg(tx.fee_rate), currency: { ...STX_CURRENCY } },
  };
}

function transferOps(
  txId: string,
  status: string,
  from: string,
  to: string,
  amount: string,
  index: number,
  memo: string | null | undefined,
  currency: { decimals: number; symbol: string } = STX_CURRENCY,
  amountMetadata?: Record<string, unknown>,
): [RosettaOperation, RosettaOperation] {
  const sender: RosettaOperation = {
    operation_identifier: { index },
    type: 'token_transfer',
    status,
    account: { address: from },
    amount: { value: neg(amount), currency: { ...currency }, ...(amountMetadata ? { metadata: amountMetadata } : {}) },
    coin_change: { coin_action: 'coin_spent', coin_identifier: { identifier: `${txId}:${index}` } },
  };
  const receiver: RosettaOperation = {
    operation_identifier: { index: index + 1 },
    related_operations: [{ index }],
    type: 'token_transfer',
    status,
    account: { address: to },
    amount: { value: pos(amount), currency: { ...currency }, ...(amountMetadata ? { metadata: amountMetadata } : {}) },
    coin_change: { coin_action: 'coin_created', coin_identifier: { identifier: `${txId}:${index + 1}` } },
  };
  // a memo field that is present (even all zeros) becomes `metadata.memo` (null when empty), as in the reference
  if (memo) {
    sender.metadata = { memo: parseMemo(memo) };
    receiver.metadata = { memo: parseMemo(memo) };
  }
  return [sender, receiver];
}

// ---- Clarity helpers ---------------------------------------------------------------------------------------------

type Cv = { type_id: number; value?: unknown; data?: Record<string, Cv>; buffer?: string; address?: string; hex: string };
const CV = { Int: 0, UInt: 1, Buffer: 2, BoolTrue: 3, BoolFalse: 4, PrincipalStandard: 5, PrincipalContract: 6, ResponseOk: 7, ResponseErr: 8, OptionalNone: 9, OptionalSome: 10, List: 11, Tuple: 12 };

function decode(hex: string): Cv | undefined {
  try {
    return codec.decodeClarityValue(hex) as unknown as Cv;
  } catch {
    return undefined;
  }
}

const digitsOf = (repr: string) => repr.replace(/[^\d.-]/g, '');

function optionalTrue(resultHex: string): string {
  const r = decode(resultHex);
  const inner = r && r.type_id === CV.OptionalSome ? (r.value as Cv) : undefined;
  // the reference reads the result as an optional; a (response ...) result is never 'true' there
  return inner && inner.type_id === CV.BoolTrue ? 'true' : 'false';
}

function stackStxMetadata(call: ContractCallJson, resultHex: string, network: 'mainnet' | 'testnet'): Record<string, unknown> {
  const args = call.function_args ?? [];
  const m: Record<string, unknown> = {};
  if (args[3]) m.lock_period = digitsOf(args[3].repr);
  if (args[0]) m.amount_ustx = digitsOf(args[0].repr);
  if (args[2]) m.start_burn_height = digitsOf(args[2].repr);
  const r = decode(resultHex);
  if (r && r.type_id === CV.ResponseOk) {
    const t = r.value as Cv;
    if (t?.data) {
      const unlock = t.data['unlock-burn-height'];
      const stacker = t.data['stacker'];
      m.unlock_burn_height = unlock?.value;
      m.stacker_address = stacker?.address;
    }
  }
  if (args[1]) {
    const addr = decode(args[1].hex);
    if (addr && addr.type_id === CV.Tuple && addr.data) {
      const version = Buffer.from((addr.data.version?.buffer ?? '').replace(/^0x/, ''), 'hex');
      const hash = Buffer.from((addr.data.hashbytes?.buffer ?? '').replace(/^0x/, ''), 'hex');
      m.pox_addr = (version.length === 1 && poxAddressToBtc(version[0], hash, network === 'mainnet')) || 'Invalid';
    }
  }
  return m;
}

function delegateStxMetadata(call: ContractCallJson, resultHex: string): Record<string, unknown> {
  const args = call.function_args ?? [];
  const m: Record<string, unknown> = {};
  if (args[0]) m.amount_ustx = digitsOf(args[0].repr);
  if (args[1]) m.delegate_to = args[1].repr.replace(/^'/, '');
  if (args[2]) m.until_burn_height = args[2].repr !== 'none' ? digitsOf(args[2].repr) : 'none';
  const poxArg = args[3];
  if (poxArg === undefined || poxArg.repr === 'none') m.pox_addr = 'none';
  else {
    const v = decode(poxArg.hex);
    if (v && v.type_id === CV.OptionalSome) m.pox_addr = (v.value as Cv).hex;
  }
  m.result = optionalTrue(resultHex);
  return m;
}

function contractCallOp(tx: OpsTx, index: number, network: 'mainnet' | 'testnet'): RosettaOperation {
  const call = tx.contract_call!;
  const op: RosettaOperation = { operation_identifier: { index }, type: 'contract_call', status: tx.status, account: { address: tx.sender_address } };
  const poxFn = ['stack-stx', 'delegate-stx', 'revoke-delegate-stx'].includes(call.function_name) && isPoxContract(call.contract_id);
  if (poxFn && call.function_name === 'stack-stx') {
    op.type = 'stack_stx';
    op.metadata = stackStxMetadata(call, tx.raw_result, network);
  } else if (poxFn && call.function_name === 'delegate-stx') {
    op.type = 'delegate_stx';
    op.metadata = delegateStxMetadata(call, tx.raw_result);
  } else if (poxFn) {
    op.type = 'revoke_delegate_stx';
    op.metadata = { result: optionalTrue(tx.raw_result) };
  } else {
    op.metadata = { ...call };
  }
  return op;
}

function eventOps(tx: OpsTx, events: OpsEvent[], ops: RosettaOperation[], ftMetadata: FtMetadata | undefined): void {
  for (const e of events) {
    if (e.event_type === 'stx_asset') {
      if (e.asset_event_type === 'transfer') {
        // a token transfer's own transfer event is already its sender/receiver operations
        if (tx.tx_type === 'token_transfer') continue;
        ops.push(...transferOps(tx.tx_id, tx.status, e.sender ?? '', e.recipient ?? '', e.amount ?? '0', ops.length, e.memo));
      } else if (e.asset_event_type === 'burn') {
        ops.push({
          operation_identifier: { index: ops.length },
          type: 'burn',
          status: tx.status,
          account: { address: tx.sender_address },
          amount: { value: neg(e.amount ?? '0'), currency: { ...STX_CURRENCY } },
        });
      } else if (e.asset_event_type === 'mint') {
        ops.push({
          operation_identifier: { index: ops.length },
          type: 'mint',
          status: tx.status,
          account: { address: e.recipient ?? '' },
          amount: { value: pos(e.amount ?? '0'), currency: { ...STX_CURRENCY } },
        });
      }
    } else if (e.event_type === 'stx_lock') {
      ops.push({
        operation_identifier: { index: ops.length },
        type: 'stx_lock',
        status: tx.status,
        account: { address: e.locked_address ?? '' },
        amount: { value: neg(e.amount ?? '0'), currency: { ...STX_CURRENCY } },
        metadata: { locked: pos(e.amount ?? '0'), unlock_height: String(e.unlock_height ?? 0) },
      });
    } else if (e.event_type === 'fungible_token_asset') {
      const meta = e.asset_identifier ? ftMetadata?.(e.asset_identifier) : undefined;
      if (!meta) continue;
      const currency = { decimals: meta.decimals, symbol: meta.symbol };
      const ft = { token_type: 'ft' };
      if (e.asset_event_type === 'transfer') {
        ops.push(...transferOps(tx.tx_id, tx.status, e.sender ?? '', e.recipient ?? '', e.amount ?? '0', ops.length, undefined, currency, ft));
      } else if (e.asset_event_type === 'burn') {
        ops.push({ operation_identifier: { index: ops.length }, type: 'burn', status: tx.status, account: { address: e.sender ?? '' }, amount: { value: neg(e.amount ?? '0'), currency, metadata: ft } });
      } else if (e.asset_event_type === 'mint') {
        ops.push({ operation_identifier: { index: ops.length }, type: 'mint', status: tx.status, account: { address: e.recipient ?? '' }, amount: { value: pos(e.amount ?? '0'), currency, metadata: ft } });
      }
    }
  }
}

/** The operations of one tx. */
export function txOperations(tx: OpsTx, ctx: OpsContext): RosettaOperation[] {
  const ops: RosettaOperation[] = [];
  switch (tx.tx_type) {
    case 'token_transfer': {
      ops.push(feeOp(tx));
      const t = tx.token_transfer!;
      ops.push(...transferOps(tx.tx_id, tx.status, tx.sender_address, t.recipient_address, t.amount, 1, t.memo));
      break;
    }
    case 'contract_call':
      ops.push(feeOp(tx));
      ops.push(contractCallOp(tx, 1, ctx.network));
      break;
    case 'smart_contract':
      ops.push(feeOp(tx));
      ops.push({ operation_identifier: { index: 1 }, type: 'smart_contract', status: tx.status, account: { address: tx.sender_address } });
      break;
    case 'coinbase':
      ops.push({ operation_identifier: { index: 0 }, type: 'coinbase', status: tx.status, account: { address: tx.sender_address } });
      for (const r of ctx.minerRewards ?? []) {
        const value = BigInt(r.coinbase_amount) + BigInt(r.tx_fees_anchored) + BigInt(r.tx_fees_streamed_confirmed) + BigInt(r.tx_fees_streamed_produced);
        ops.push({
          operation_identifier: { index: ops.length },
          status: 'success',
          type: 'miner_reward',
          account: { address: r.recipient },
          amount: { value: value.toString(10), currency: { ...STX_CURRENCY } },
        });
      }
      for (const u of ctx.unlocks ?? []) {
        ops.push({
          operation_identifier: { index: ops.length },
          type: 'stx_unlock',
          status: 'success',
          account: { address: u.stacker_address },
          amount: { value: u.unlocked_amount, currency: { ...STX_CURRENCY } },
          metadata: { tx_id: u.tx_id },
        });
      }
      break;
    case 'poison_microblock':
      ops.push({ operation_identifier: { index: 0 }, type: 'poison_microblock', status: tx.status, account: { address: tx.sender_address } });
      break;
    case 'tenure_change':
      ops.push({ operation_identifier: { index: 0 }, type: 'tenure_change', status: tx.status, metadata: { ...(tx.tenure_change_payload ?? {}) } });
      break;
    default:
      throw new Error(`unexpected tx type ${tx.tx_type}`);
  }
  if (ctx.events) eventOps(tx, ctx.events, ops, ctx.ftMetadata);
  return ops;
}

/** One tx as Rosetta lists it: its id, operations and (for a token transfer with a memo) the memo. */
export function rosettaTransaction(tx: OpsTx, ctx: OpsContext): RosettaTransaction {
  const out: RosettaTransaction = { transaction_identifier: { hash: tx.tx_id }, operations: txOperations(tx, ctx) };
  const memo = parseMemo(tx.token_transfer?.memo);
  if (memo) out.metadata = { memo };
  return out;
}

/**
 * A pending contract call as the reference's /mempool/transaction lists it. Its contract-call operation is built from
 * the call as stored among mined txs (`stored`: the reference's getTx, any placement up to the tip): the status and,
 * for a PoX stacking call, the type and metadata come from there (the fee operation stays pending). A call that was
 * never mined has no such row and the reference fails (400 with an empty body): undefined here.
 */
export function pendingContractCall(pending: OpsTx, stored: OpsTx | undefined, ctx: OpsContext): RosettaTransaction | undefined {
  if (!stored) return undefined;
  const out = rosettaTransaction(pending, ctx);
  out.operations[1] = contractCallOp(stored, 1, ctx.network);
  return out;
}

/**
 * The STX a tx's operations move, per account (total balance): fees, transfers, mints, burns, miner rewards. Failed
 * operations move nothing but the fee. stx_lock / stx_unlock do not change the total: an stx_lock states the account's
 * whole locked amount from then on (a stack-extend repeats it, a stack-increase states the new total), an stx_unlock
 * releases it; the spendable balance (/account/balance) is the total minus the locked amount.
 */
export function stxDeltas(ops: RosettaOperation[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const op of ops) {
    if (!op.amount || op.amount.currency.symbol !== 'STX' || !op.account) continue;
    if (op.type === 'stx_lock' || op.type === 'stx_unlock') continue;
    if (op.type !== 'fee' && op.status !== 'success') continue;
    const v = BigInt(op.amount.value);
    out.set(op.account.address, (out.get(op.account.address) ?? 0n) + v);
  }
  return out;
}
