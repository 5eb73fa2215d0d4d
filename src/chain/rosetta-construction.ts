/**
 * The Rosetta construction rules, one table (ROSETTA_CONSTRUCTION): for each operation type, what it adds to the
 * options of /construction/preprocess and /construction/payloads (the reference's getOptionsFromOperations), and for
 * the operation types that make a transaction (token_transfer, stack_stx, delegate_stx), what each construction step
 * checks and which unsigned transaction it builds with @stacks/transactions. The routes (api/routes/rosetta/
 * construction.ts) read the table; what needs the node (the PoX contract, /v2/pox) is a function they pass in.
 */
import { randomBytes } from 'node:crypto';
import {
  makeUnsignedContractCall,
  makeUnsignedSTXTokenTransfer,
  uintCV,
  standardPrincipalCV,
  noneCV,
  someCV,
  tupleCV,
  bufferCV,
  type StacksTransactionWire,
} from '@stacks/transactions';
import { codec } from './native.js';
import { btcAddressPoxTuple } from './pox.js';
import { PulseError } from '../errors.js';

/** The Rosetta errors a construction rule refuses with (by their names in the Rosetta error list). */
export type RefusalName = 'invalidOperation' | 'invalidRecipient' | 'invalidCurrencyDecimals' | 'missingContractAddress' | 'missingContractName';

/** A construction rule's refusal: the route answers the named Rosetta error (400). */
export class ConstructionRefusal extends PulseError {
  constructor(readonly error: RefusalName) {
    super(error);
  }
}

const refuse = (error: RefusalName): never => {
  throw new ConstructionRefusal(error);
};

export type RosettaNetworkName = 'mainnet' | 'testnet';
export type Options = Record<string, unknown>;

/** An operation of a construction request, as the routes received it. */
export interface OperationInput {
  type: string;
  account?: { address?: string };
  amount?: { value: string; currency: { symbol: string; decimals: number } };
  metadata?: Record<string, unknown>;
}

/** The node's PoX contract and where the chain is (GET /v2/pox). */
export interface PoxContract {
  address: string;
  name: string;
  current_burnchain_block_height?: number;
  current_cycle?: { id?: number };
}

export const strip0x = (h: string) => (h.startsWith('0x') ? h.slice(2) : h);
export const isC32 = (a: unknown): a is string => typeof a === 'string' && codec.isValidStacksAddress(a);
const PLACEHOLDER_KEY = '000000000000000000000000000000000000000000000000000000000000000000';

/** What a transaction-making operation type does at each construction step. */
export interface TransactionRule {
  /** /construction/preprocess: checks the options; a transaction of the final size (placeholder key and signature). */
  sizeTx(o: Options, env: { network: RosettaNetworkName; memo: string | undefined; pox: () => Promise<PoxContract> }): Promise<StacksTransactionWire>;
  /** /construction/metadata: checks and completes the options; the transaction whose payload the fee is estimated for. */
  feeTx(o: Options, env: { network: RosettaNetworkName; pox: () => Promise<PoxContract> }): Promise<StacksTransactionWire>;
  /** /construction/payloads: the unsigned transaction of the options and metadata. */
  unsignedTx(
    o: Options,
    md: Record<string, unknown>,
    env: { network: RosettaNetworkName; publicKey: string; fee: bigint; nonce: bigint },
  ): Promise<StacksTransactionWire>;
}

export interface OperationRule {
  /** Adds what the operation says to the options; false when the operation set cannot be built. */
  fill(o: Options, op: OperationInput): boolean;
  /** For the operation types that name the transaction (options.type). */
  tx?: TransactionRule;
}

function poxAddrCV(btc: string) {
  const tuple = btcAddressPoxTuple(btc);
  if (!tuple) refuse('invalidOperation');
  const d = codec.decodeClarityValue(tuple!) as unknown as { data: { version: { buffer: string }; hashbytes: { buffer: string } } };
  return tupleCV({ version: bufferCV(Buffer.from(strip0x(d.data.version.buffer), 'hex')), hashbytes: bufferCV(Buffer.from(strip0x(d.data.hashbytes.buffer), 'hex')) });
}

async function delegateTx(network: RosettaNetworkName, o: Options, publicKey: string, fee: bigint, nonce: bigint, contract: { address: string; name: string }, untilBurnHeight?: unknown) {
  return makeUnsignedContractCall({
    contractAddress: contract.address,
    contractName: contract.name,
    functionName: 'delegate-stx',
    functionArgs: [
      uintCV(String(o.amount)),
      standardPrincipalCV(String(o.delegate_to)),
      untilBurnHeight ? someCV(uintCV(String(untilBurnHeight))) : noneCV(),
      o.pox_addr ? someCV(poxAddrCV(String(o.pox_addr))) : noneCV(),
    ],
    validateWithAbi: false,
    publicKey,
    fee,
    nonce,
    network,
  });
}

interface StackArgs {
  amount: string;
  poxAddr: string;
  startBurnHeight: string | number;
  cycles: string | number;
  /** pox-4 only */
  signerKey?: string;
  signerSignature?: string;
  maxAmount?: string;
  authId?: string | number;
}

/** A stack-stx call (pox-4 takes the signer fields too). */
async function stackTx(network: RosettaNetworkName, contract: { address: string; name: string }, a: StackArgs, publicKey: string, fee: bigint, nonce: bigint) {
  const buf = (hex: string) => bufferCV(Buffer.from(strip0x(hex), 'hex'));
  const args = [uintCV(a.amount), poxAddrCV(a.poxAddr), uintCV(String(a.startBurnHeight)), uintCV(String(a.cycles))];
  if (contract.name === 'pox-4') {
    args.push(
      (a.signerSignature ? someCV(buf(a.signerSignature)) : noneCV()) as never,
      buf(a.signerKey ?? '') as never,
      uintCV(String(a.maxAmount ?? a.amount)) as never,
      uintCV(String(a.authId ?? 0)) as never,
    );
  }
  return makeUnsignedContractCall({
    contractAddress: contract.address,
    contractName: contract.name,
    functionName: 'stack-stx',
    functionArgs: args,
    validateWithAbi: false,
    publicKey,
    fee,
    nonce,
    network,
  });
}

const tokenTransfer: TransactionRule = {
  async sizeTx(o, { network, memo }) {
    if (typeof o.amount !== 'string' || !isC32(o.token_transfer_recipient_address)) refuse('invalidOperation');
    return makeUnsignedSTXTokenTransfer({ recipient: String(o.token_transfer_recipient_address), amount: BigInt(String(o.amount)), fee: 0, publicKey: PLACEHOLDER_KEY, network, nonce: 0, memo });
  },
  async feeTx(o, { network }) {
    if (o.decimals !== 6) refuse('invalidCurrencyDecimals');
    if (!isC32(o.token_transfer_recipient_address)) refuse('invalidRecipient');
    return makeUnsignedSTXTokenTransfer({ recipient: String(o.token_transfer_recipient_address), amount: 1n, fee: 0, publicKey: PLACEHOLDER_KEY, network, nonce: 0, memo: '123456' });
  },
  async unsignedTx(o, md, { network, publicKey, fee, nonce }) {
    if (!o.token_transfer_recipient_address) refuse('invalidRecipient');
    const memo = typeof md.memo === 'string' ? md.memo : undefined;
    return makeUnsignedSTXTokenTransfer({ recipient: String(o.token_transfer_recipient_address), amount: BigInt(String(o.amount)), fee, publicKey, network, nonce, memo });
  },
};

const stackStx: TransactionRule = {
  async sizeTx(o, { network, pox: poxInfo }) {
    const pox = await poxInfo();
    if (!o.number_of_cycles || !o.pox_addr || !o.amount) refuse('invalidOperation');
    if (pox.name === 'pox-4' && !o.signer_key) refuse('invalidOperation');
    if (!btcAddressPoxTuple(String(o.pox_addr))) refuse('invalidOperation');
    // the size of the call, with a signature-sized placeholder where pox-4 takes one
    return stackTx(
      network,
      pox,
      { amount: String(o.amount), poxAddr: String(o.pox_addr), startBurnHeight: 0, cycles: String(o.number_of_cycles), signerKey: String(o.signer_key ?? ''), signerSignature: '00'.repeat(65), maxAmount: String(o.pox_max_amount ?? o.amount), authId: String(o.pox_auth_id ?? 0) },
      PLACEHOLDER_KEY,
      0n,
      0n,
    ).catch(() => refuse('invalidOperation'));
  },
  async feeTx(o, { network, pox: poxInfo }) {
    const pox = await poxInfo();
    if (!o.number_of_cycles || !o.pox_addr) refuse('invalidOperation');
    if (!btcAddressPoxTuple(String(o.pox_addr))) refuse('invalidOperation');
    o.contract_address = pox.address;
    o.contract_name = pox.name;
    o.burn_block_height ??= pox.current_burnchain_block_height;
    o.reward_cycle_id ??= pox.current_cycle?.id;
    if (pox.name === 'pox-4') {
      if (!o.signer_key) refuse('invalidOperation');
      o.pox_auth_id ??= BigInt('0x' + randomBytes(16).toString('hex')).toString();
    }
    return stackTx(
      network,
      pox,
      { amount: '0', poxAddr: String(o.pox_addr), startBurnHeight: String(o.burn_block_height ?? 0), cycles: String(o.number_of_cycles), signerKey: String(o.signer_key ?? ''), signerSignature: typeof o.signer_signature === 'string' ? o.signer_signature : undefined, maxAmount: String(o.pox_max_amount ?? o.amount ?? 1), authId: String(o.pox_auth_id ?? 0) },
      PLACEHOLDER_KEY,
      0n,
      0n,
    ).catch(() => refuse('invalidOperation'));
  },
  async unsignedTx(o, md, { network, publicKey, fee, nonce }) {
    const pick = (k: string) => (o[k] ?? md[k]) as string | number | undefined;
    const contractAddress = pick('contract_address');
    const contractName = pick('contract_name');
    const poxAddr = pick('pox_addr');
    const burnHeight = pick('burn_block_height');
    const cycles = pick('number_of_cycles');
    if (!poxAddr) refuse('invalidOperation');
    if (!contractAddress) refuse('missingContractAddress');
    if (!contractName) refuse('missingContractName');
    if (!burnHeight || !cycles || !o.amount) refuse('invalidOperation');
    const pox4 = contractName === 'pox-4';
    const signerKey = pick('signer_key');
    const maxAmount = pick('pox_max_amount') ?? String(o.amount);
    const rewardCycle = pick('reward_cycle_id');
    const authId = pick('pox_auth_id');
    if (pox4 && (!signerKey || !maxAmount || !rewardCycle || !authId)) refuse('invalidOperation');
    const signerSignature = pick('signer_signature');
    return stackTx(
      network,
      { address: String(contractAddress), name: String(contractName) },
      { amount: String(o.amount), poxAddr: String(poxAddr), startBurnHeight: String(burnHeight), cycles: String(cycles), signerKey: String(signerKey ?? ''), signerSignature: signerSignature ? String(signerSignature) : undefined, maxAmount: String(maxAmount), authId: String(authId ?? 0) },
      publicKey,
      fee,
      nonce,
    );
  },
};

const delegateStx: TransactionRule = {
  async sizeTx(o, { network }) {
    if (!o.amount || !o.delegate_to) refuse('invalidOperation');
    const boot = network === 'mainnet' ? 'SP000000000000000000002Q6VF78' : 'ST000000000000000000002AMW42H';
    if (!isC32(o.delegate_to)) refuse('invalidOperation');
    return delegateTx(network, o, PLACEHOLDER_KEY, 0n, 0n, { address: boot, name: 'pox' });
  },
  async feeTx(o, { network, pox: poxInfo }) {
    const { address, name } = await poxInfo();
    o.contract_address = address;
    o.contract_name = name;
    return delegateTx(network, { amount: '1', delegate_to: 'SP3FGQ8Z7JY9BWYZ5WM53E0M9NK7WHJF0691NZ159', pox_addr: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }, PLACEHOLDER_KEY, 0n, 0n, { address, name }, 1);
  },
  async unsignedTx(o, md, { network, publicKey, fee, nonce }) {
    if (!isC32(o.delegate_to)) refuse('invalidOperation');
    if (!md.contract_address) refuse('missingContractAddress');
    if (!md.contract_name) refuse('missingContractName');
    if (!o.delegate_to || !o.amount) refuse('invalidOperation');
    return delegateTx(network, o, publicKey, fee, nonce, { address: String(md.contract_address), name: String(md.contract_name) }, md.burn_block_height);
  },
};

/** stack_stx and delegate_stx fill the options alike: the sender, the locked amount, the PoX fields of the metadata. */
function poxOperation(type: 'stack_stx' | 'delegate_stx'): (o: Options, op: OperationInput) => boolean {
  return (o, op) => {
    const amount = op.amount;
    if (amount && BigInt(amount.value) > 0n) return false;
    const md = op.metadata;
    if (type === 'stack_stx' && (!md || typeof md.number_of_cycles !== 'number')) return false;
    if (type === 'delegate_stx' && (!md || typeof md.delegate_to !== 'string')) return false;
    o.sender_address = op.account?.address;
    o.type = type;
    o.amount = amount?.value.replace('-', '');
    o.symbol = amount?.currency.symbol;
    o.decimals = amount?.currency.decimals;
    o.pox_addr = md!.pox_addr;
    if (type === 'stack_stx') {
      o.number_of_cycles = md!.number_of_cycles;
      for (const k of ['signer_private_key', 'signer_signature', 'signer_key', 'pox_max_amount', 'pox_auth_id', 'reward_cycle_id']) o[k] = md![k];
    } else o.delegate_to = md!.delegate_to;
    return true;
  };
}

/** The construction rules by operation type (the reference's: a token transfer with its fee, stack_stx, delegate_stx). */
export const ROSETTA_CONSTRUCTION: ReadonlyMap<string, OperationRule> = new Map<string, OperationRule>([
  [
    'fee',
    {
      fill(o, op) {
        o.fee = op.amount?.value;
        return true;
      },
    },
  ],
  [
    'token_transfer',
    {
      fill(o, op) {
        const amount = op.amount;
        if (amount) {
          if (BigInt(amount.value) < 0n) {
            o.sender_address = op.account?.address;
            o.type = op.type;
          } else {
            o.token_transfer_recipient_address = op.account?.address;
            o.amount = amount.value;
            o.symbol = amount.currency.symbol;
            o.decimals = amount.currency.decimals;
          }
        }
        return true;
      },
      tx: tokenTransfer,
    },
  ],
  ['stack_stx', { fill: poxOperation('stack_stx'), tx: stackStx }],
  ['delegate_stx', { fill: poxOperation('delegate_stx'), tx: delegateStx }],
]);

/** The reference's getOptionsFromOperations: the options an operation set stands for, or null. */
export function constructionOptions(operations: OperationInput[]): Options | null {
  const o: Options = {};
  for (const op of operations) {
    const amount = op.amount;
    // an amount must be an integer (the reference's BigInt would throw: a 500 there)
    if (amount !== undefined && (typeof amount?.value !== 'string' || !/^-?\d+$/.test(amount.value) || typeof amount.currency !== 'object' || amount.currency === null)) return null;
    const rule = ROSETTA_CONSTRUCTION.get(op.type);
    if (!rule || !rule.fill(o, op)) return null;
  }
  return o;
}

/** The transaction rule of the options' type, or undefined when no operation type makes that transaction. */
export function transactionRule(o: Options): TransactionRule | undefined {
  return typeof o.type === 'string' ? ROSETTA_CONSTRUCTION.get(o.type)?.tx : undefined;
}
