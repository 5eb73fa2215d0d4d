/**
 * POST /rosetta/v1/construction/{derive,preprocess,metadata,payloads,combine,parse,hash,submit}: building, signing
 * and submitting a transaction the Rosetta way, with @stacks/transactions (v7; the reference used 6.11.3, which reads
 * less of the wire format: src/chain/rosetta-wire.ts says what, and decodeWire refuses it like the reference). Offline: derive, preprocess, payloads, combine, parse, hash. metadata and submit need the node pool.
 * Supported operation sets are the reference's: a token transfer (fee, sender, recipient), stack_stx (the PoX contract
 * and cycle come from the node's /v2/pox; pox-4 needs the signer key, and the signer signature when the caller has one),
 * delegate_stx.
 */
import { z } from 'zod';
import {
  deserializeTransaction,
  emptyMessageSignature,
  getAddressFromPublicKey,
  isSingleSig,
  makeUnsignedContractCall,
  makeUnsignedSTXTokenTransfer,
  sigHashPreSign,
  serializePayload,
  AuthType,
  PayloadType,
  createMessageSignature,
  verifySignature,
  uintCV,
  standardPrincipalCV,
  noneCV,
  someCV,
  tupleCV,
  bufferCV,
  type StacksTransactionWire,
} from '@stacks/transactions';
import { randomBytes } from 'node:crypto';
import { raw } from '../../endpoint.js';
import { json, httpError } from '../../../http/response.js';
import { component } from '../../schemas/common.js';
import { NetworkIdentifier } from '../../schemas/rosetta.js';
import { RosettaErrors, checkNetwork, nodeUnavailableReply, fail, rosettaGuard, rosettaInvalid, type RosettaNetwork, rosettaEndpoint } from '../../rosetta.js';
import { decodeTx } from '../../../chain/tx.js';
import { codec } from '../../../chain/native.js';
import { btcAddressPoxTuple } from '../../../chain/pox.js';
import { txOperations, parseMemo, type RosettaOperation } from '../../../chain/rosetta-ops.js';
import { readableByReference, referenceTxid } from '../../../chain/rosetta-wire.js';
import { nodeCall, NoNodeError } from '../../../proxy/rpc.js';
import * as store from '../../../store/rosetta.js';
import type { ApiContext } from '../../context.js';

const Obj = z.record(z.string(), z.unknown());
const PublicKey = z.strictObject({ hex_bytes: z.string(), curve_type: z.enum(['secp256k1', 'edwards25519']) });
const OperationIn = z.looseObject({ operation_identifier: z.looseObject({ index: z.number().int() }), type: z.string() });
const Signature = z.looseObject({
  signing_payload: z.looseObject({ hex_bytes: z.string() }),
  public_key: z.looseObject({ hex_bytes: z.string(), curve_type: z.string() }),
  signature_type: z.string(),
  hex_bytes: z.string(),
});

const DeriveRequest = z.strictObject({ network_identifier: NetworkIdentifier, public_key: PublicKey, metadata: Obj.optional() });
const PreprocessRequest = z.strictObject({
  network_identifier: NetworkIdentifier,
  operations: z.array(OperationIn),
  metadata: Obj.optional(),
  max_fee: z.array(z.looseObject({ value: z.string(), currency: z.looseObject({ symbol: z.string(), decimals: z.number().int() }) })).optional(),
  suggested_fee_multiplier: z.number().int().optional(),
});
const MetadataRequest = z.strictObject({ network_identifier: NetworkIdentifier, options: Obj, public_keys: z.array(PublicKey).optional() });
const PayloadsRequest = z.strictObject({ network_identifier: NetworkIdentifier, operations: z.array(OperationIn), public_keys: z.array(PublicKey).optional(), metadata: Obj.optional() });
const CombineRequest = z.strictObject({ network_identifier: NetworkIdentifier, unsigned_transaction: z.string(), signatures: z.array(Signature) });
const ParseRequest = z.strictObject({ network_identifier: NetworkIdentifier, signed: z.boolean(), transaction: z.string() });
const SignedTxRequest = z.strictObject({ network_identifier: NetworkIdentifier, signed_transaction: z.string() });

const AccountId = z.object({ address: z.string() });
const DeriveResponse = component('RosettaConstructionDeriveResponse', z.object({ account_identifier: AccountId }));
const PreprocessResponse = component('RosettaConstructionPreprocessResponse', z.object({ options: Obj, required_public_keys: z.array(AccountId) }));
const MetadataResponse = component('RosettaConstructionMetadataResponse', z.object({ metadata: Obj, suggested_fee: z.array(Obj) }));
const PayloadsResponse = component(
  'RosettaConstructionPayloadsResponse',
  z.object({ unsigned_transaction: z.string(), payloads: z.array(z.object({ address: z.string(), account_identifier: AccountId, hex_bytes: z.string(), signature_type: z.string() })) }),
);
const CombineResponse = component('RosettaConstructionCombineResponse', z.object({ signed_transaction: z.string() }));
const ParseResponse = component(
  'RosettaConstructionParseResponse',
  z.object({ operations: z.array(Obj), account_identifier_signers: z.array(AccountId).optional(), metadata: z.object({ memo: z.string() }).optional() }),
);
const HashResponse = component('RosettaConstructionHashResponse', z.object({ transaction_identifier: z.object({ hash: z.string() }) }));

const with0x = (h: string) => (h.startsWith('0x') ? h : '0x' + h);
const strip0x = (h: string) => (h.startsWith('0x') ? h.slice(2) : h);
const PLACEHOLDER_KEY = '000000000000000000000000000000000000000000000000000000000000000000';

/**
 * A transaction as the reference reads it: what its @stacks/transactions 6.11.3 cannot deserialize (a 500 there, see
 * src/chain/rosetta-wire.ts) is refused like an unreadable string.
 */
function decodeWire(hex: string): StacksTransactionWire {
  const h = strip0x(hex);
  if (!/^([0-9a-fA-F]{2})+$/.test(h)) fail(400, RosettaErrors.invalidTransactionString);
  let tx: StacksTransactionWire;
  try {
    tx = deserializeTransaction(h);
  } catch {
    return fail(400, RosettaErrors.invalidTransactionString);
  }
  if (!readableByReference(tx)) fail(400, RosettaErrors.invalidTransactionString);
  return tx;
}

function isSigned(tx: StacksTransactionWire): boolean {
  const cond = tx.auth.spendingCondition;
  if (!cond) return false;
  if (isSingleSig(cond)) return !!cond.signature.data && cond.signature.data !== emptyMessageSignature().data;
  return cond.fields.length > 0;
}

const isC32 = (a: unknown): a is string => typeof a === 'string' && codec.isValidStacksAddress(a);

type Options = Record<string, unknown>;
type OpIn = z.infer<typeof OperationIn> & { account?: { address?: string }; amount?: { value: string; currency: { symbol: string; decimals: number } }; metadata?: Record<string, unknown> };

/** The reference's getOptionsFromOperations: the options an operation set stands for, or null. */
function optionsOf(operations: OpIn[]): Options | null {
  const o: Options = {};
  for (const op of operations) {
    const amount = op.amount;
    // an amount must be an integer (the reference's BigInt would throw: a 500 there)
    if (amount !== undefined && (typeof amount?.value !== 'string' || !/^-?\d+$/.test(amount.value) || typeof amount.currency !== 'object' || amount.currency === null)) return null;
    switch (op.type) {
      case 'fee':
        o.fee = amount?.value;
        break;
      case 'token_transfer':
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
        break;
      case 'stack_stx':
      case 'delegate_stx': {
        if (amount && BigInt(amount.value) > 0n) return null;
        const md = op.metadata;
        if (op.type === 'stack_stx' && (!md || typeof md.number_of_cycles !== 'number')) return null;
        if (op.type === 'delegate_stx' && (!md || typeof md.delegate_to !== 'string')) return null;
        o.sender_address = op.account?.address;
        o.type = op.type;
        o.amount = amount?.value.replace('-', '');
        o.symbol = amount?.currency.symbol;
        o.decimals = amount?.currency.decimals;
        o.pox_addr = md!.pox_addr;
        if (op.type === 'stack_stx') {
          o.number_of_cycles = md!.number_of_cycles;
          for (const k of ['signer_private_key', 'signer_signature', 'signer_key', 'pox_max_amount', 'pox_auth_id', 'reward_cycle_id']) o[k] = md![k];
        } else o.delegate_to = md!.delegate_to;
        break;
      }
      default:
        return null;
    }
  }
  return o;
}

function poxAddrCV(btc: string) {
  const tuple = btcAddressPoxTuple(btc);
  if (!tuple) fail(400, RosettaErrors.invalidOperation);
  const d = codec.decodeClarityValue(tuple!) as unknown as { data: { version: { buffer: string }; hashbytes: { buffer: string } } };
  return tupleCV({ version: bufferCV(Buffer.from(strip0x(d.data.version.buffer), 'hex')), hashbytes: bufferCV(Buffer.from(strip0x(d.data.hashbytes.buffer), 'hex')) });
}

async function delegateTx(network: RosettaNetwork, o: Options, publicKey: string, fee: bigint, nonce: bigint, contract: { address: string; name: string }, untilBurnHeight?: unknown) {
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
async function stackTx(network: RosettaNetwork, contract: { address: string; name: string }, a: StackArgs, publicKey: string, fee: bigint, nonce: bigint) {
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

interface PoxInfo {
  contract_id?: string;
  current_burnchain_block_height?: number;
  current_cycle?: { id?: number };
}

async function poxInfo(ctx: ApiContext): Promise<PoxInfo & { address: string; name: string }> {
  const r = await fromNode(ctx, 'GET', '/v2/pox');
  const info = (r.body ?? {}) as PoxInfo;
  const [address, name] = String(info.contract_id ?? '').split('.');
  if (r.status !== 200 || !address || !name) throw new NodeUnavailable(`GET /v2/pox answered ${r.status}`);
  return { ...info, address, name };
}

/** The node's answer (JSON) or a 503 when no node answers. */
async function fromNode(ctx: ApiContext, method: 'GET' | 'POST', path: string, body?: { contentType: string; data: Buffer | string }) {
  try {
    return await nodeCall(ctx.nodes?.(), method, path, body);
  } catch (err) {
    if (err instanceof NoNodeError) throw new NodeUnavailable(err.message);
    throw err;
  }
}

class NodeUnavailable extends Error {}

async function guardNode(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    return await rosettaGuard(fn);
  } catch (err) {
    if (err instanceof NodeUnavailable) return nodeUnavailableReply(err.message);
    throw err;
  }
}

function signersOf(tx: StacksTransactionWire, network: RosettaNetwork): { address: string }[] | undefined {
  const p = tx.payload as unknown as { payloadType: number; recipient?: { value: string }; contractAddress?: { version: number } };
  let version: number;
  // the reference names signers only for token transfers and contract calls, with the recipient's / contract's version
  if (p.payloadType === PayloadType.TokenTransfer && p.recipient) {
    const addr = p.recipient.value.split('.')[0];
    version = codec.decodeStacksAddress(addr)[0];
  } else if (p.payloadType === PayloadType.ContractCall && p.contractAddress) version = p.contractAddress.version;
  else return undefined;
  void network;
  const out: { address: string }[] = [];
  const signer = (c: { signer: string } | undefined) => c && out.push({ address: codec.stacksAddressFromParts(version, c.signer) });
  signer(tx.auth.spendingCondition as unknown as { signer: string });
  if (tx.auth.authType === AuthType.Sponsored) signer((tx.auth as unknown as { sponsorSpendingCondition?: { signer: string } }).sponsorSpendingCondition);
  return out;
}

export const rosettaConstructionEndpoints = [
  rosettaEndpoint({
    path: '/rosetta/v1/construction/derive',
    operationId: 'rosetta_construction_derive',
    summary: 'The account of a public key',
    body: DeriveRequest,
    response: DeriveResponse,
    errors: [400],
    invalid: (message, issues) =>
      issues.some((i) => i.code === 'invalid_value') ? json(400, { ...RosettaErrors.invalidCurveType }) : rosettaInvalid('network_identifier')(message, issues),
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const hex = strip0x(body.public_key.hex_bytes);
        let address: string;
        try {
          if (!/^(02|03)[0-9a-fA-F]{64}$|^04[0-9a-fA-F]{128}$/.test(hex)) throw new Error('bad key');
          address = getAddressFromPublicKey(hex, network);
        } catch {
          return fail(400, RosettaErrors.invalidPublicKey);
        }
        return { account_identifier: { address } };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/preprocess',
    operationId: 'rosetta_construction_preprocess',
    summary: 'The options for /construction/metadata from an operation set',
    description: 'A stack_stx operation needs the node (its PoX contract, /v2/pox): without one, 503.',
    body: PreprocessRequest,
    response: PreprocessResponse,
    errors: [400, 503],
    handler: ({ body }, ctx) =>
      guardNode(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const ops = body.operations as OpIn[];
        if (ops.length > 3) fail(400, RosettaErrors.invalidOperation);
        if (ops.some((o) => o.amount?.currency?.symbol !== 'STX')) fail(400, RosettaErrors.invalidCurrencySymbol);
        if (ops.some((o) => o.amount?.currency?.decimals !== 6)) fail(400, RosettaErrors.invalidCurrencyDecimals);
        const o = optionsOf(ops);
        if (!o) return fail(400, RosettaErrors.invalidOperation);
        const md = body.metadata;
        if (md) {
          if (md.gas_limit) o.gas_limit = md.gas_limit;
          if (md.gas_price) o.gas_price = md.gas_price;
          if (body.suggested_fee_multiplier) o.suggested_fee_multiplier = body.suggested_fee_multiplier;
        }
        if (body.max_fee) {
          const m = body.max_fee[0];
          if (m && m.currency.symbol === 'STX' && m.currency.decimals === 6) o.max_fee = m.value;
          else fail(400, RosettaErrors.invalidFee);
        }
        const memo = typeof md?.memo === 'string' ? md.memo : undefined;
        let size: number;
        if (o.type === 'token_transfer') {
          if (typeof o.amount !== 'string' || !isC32(o.token_transfer_recipient_address)) fail(400, RosettaErrors.invalidOperation);
          const tx = await makeUnsignedSTXTokenTransfer({ recipient: String(o.token_transfer_recipient_address), amount: BigInt(String(o.amount)), fee: 0, publicKey: PLACEHOLDER_KEY, network, nonce: 0, memo });
          size = tx.serializeBytes().byteLength;
        } else if (o.type === 'delegate_stx') {
          if (!o.amount || !o.delegate_to) fail(400, RosettaErrors.invalidOperation);
          const boot = network === 'mainnet' ? 'SP000000000000000000002Q6VF78' : 'ST000000000000000000002AMW42H';
          if (!isC32(o.delegate_to)) fail(400, RosettaErrors.invalidOperation);
          const tx = await delegateTx(network, o, PLACEHOLDER_KEY, 0n, 0n, { address: boot, name: 'pox' });
          size = tx.serializeBytes().byteLength;
        } else if (o.type === 'stack_stx') {
          const pox = await poxInfo(ctx);
          if (!o.number_of_cycles || !o.pox_addr || !o.amount) fail(400, RosettaErrors.invalidOperation);
          if (pox.name === 'pox-4' && !o.signer_key) fail(400, RosettaErrors.invalidOperation);
          if (!btcAddressPoxTuple(String(o.pox_addr))) fail(400, RosettaErrors.invalidOperation);
          // the size of the call, with a signature-sized placeholder where pox-4 takes one
          const tx = await stackTx(
            network,
            pox,
            { amount: String(o.amount), poxAddr: String(o.pox_addr), startBurnHeight: 0, cycles: String(o.number_of_cycles), signerKey: String(o.signer_key ?? ''), signerSignature: '00'.repeat(65), maxAmount: String(o.pox_max_amount ?? o.amount), authId: String(o.pox_auth_id ?? 0) },
            PLACEHOLDER_KEY,
            0n,
            0n,
          ).catch(() => fail(400, RosettaErrors.invalidOperation));
          size = tx.serializeBytes().byteLength;
        } else return fail(400, RosettaErrors.invalidOperation);
        o.size = size;
        if (memo !== undefined) o.memo = memo;
        return { options: o, required_public_keys: [{ address: String(o.sender_address) }] };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/metadata',
    operationId: 'rosetta_construction_metadata',
    summary: 'Nonce, recent block and suggested fee for the options',
    description: "Needs the node: the sender's nonce (/v2/accounts) and the fee estimate (/v2/fees/transaction). Without one, 503.",
    body: MetadataRequest,
    response: MetadataResponse,
    errors: [400, 503],
    handler: ({ body }, ctx) =>
      guardNode(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const o = { ...body.options };
        if (o.sender_address && !isC32(o.sender_address)) fail(400, RosettaErrors.invalidSender);
        if (o.symbol !== 'STX') fail(400, RosettaErrors.invalidCurrencySymbol);
        if (!o.fee && o.size === undefined) fail(400, RosettaErrors.missingTransactionSize);
        let payloadTx;
        if (o.type === 'token_transfer') {
          if (o.decimals !== 6) fail(400, RosettaErrors.invalidCurrencyDecimals);
          if (!isC32(o.token_transfer_recipient_address)) fail(400, RosettaErrors.invalidRecipient);
          payloadTx = await makeUnsignedSTXTokenTransfer({ recipient: String(o.token_transfer_recipient_address), amount: 1n, fee: 0, publicKey: PLACEHOLDER_KEY, network, nonce: 0, memo: '123456' });
        } else if (o.type === 'stack_stx') {
          const pox = await poxInfo(ctx);
          if (!o.number_of_cycles || !o.pox_addr) fail(400, RosettaErrors.invalidOperation);
          if (!btcAddressPoxTuple(String(o.pox_addr))) fail(400, RosettaErrors.invalidOperation);
          o.contract_address = pox.address;
          o.contract_name = pox.name;
          o.burn_block_height ??= pox.current_burnchain_block_height;
          o.reward_cycle_id ??= pox.current_cycle?.id;
          if (pox.name === 'pox-4') {
            if (!o.signer_key) fail(400, RosettaErrors.invalidOperation);
            o.pox_auth_id ??= BigInt('0x' + randomBytes(16).toString('hex')).toString();
          }
          payloadTx = await stackTx(
            network,
            pox,
            { amount: '0', poxAddr: String(o.pox_addr), startBurnHeight: String(o.burn_block_height ?? 0), cycles: String(o.number_of_cycles), signerKey: String(o.signer_key ?? ''), signerSignature: typeof o.signer_signature === 'string' ? o.signer_signature : undefined, maxAmount: String(o.pox_max_amount ?? o.amount ?? 1), authId: String(o.pox_auth_id ?? 0) },
            PLACEHOLDER_KEY,
            0n,
            0n,
          ).catch(() => fail(400, RosettaErrors.invalidOperation));
        } else if (o.type === 'delegate_stx') {
          const pox = await poxInfo(ctx);
          const { address, name } = pox;
          o.contract_address = address;
          o.contract_name = name;
          payloadTx = await delegateTx(network, { amount: '1', delegate_to: 'SP3FGQ8Z7JY9BWYZ5WM53E0M9NK7WHJF0691NZ159', pox_addr: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4' }, PLACEHOLDER_KEY, 0n, 0n, { address, name }, 1);
        } else return fail(400, RosettaErrors.invalidTransactionType);
        if (o.sender_address === undefined) fail(400, RosettaErrors.missingSenderAddress);
        const account = await fromNode(ctx, 'GET', `/v2/accounts/${String(o.sender_address)}?proof=0`);
        const nonce = Number((account.body as { nonce?: number } | null)?.nonce ?? 0);
        const estimate = await fromNode(ctx, 'POST', '/v2/fees/transaction', {
          contentType: 'application/json',
          data: JSON.stringify({ transaction_payload: '0x' + serializePayload(payloadTx.payload), estimated_len: Number(o.size ?? 0) }),
        });
        const estimations = (estimate.body as { estimations?: { fee: number }[] } | null)?.estimations;
        const fee = estimations && estimations.length ? String(estimations[Math.min(1, estimations.length - 1)].fee) : undefined;
        if (!fee || fee === '0') fail(400, RosettaErrors.invalidFee);
        const tip = await store.rosettaTip(ctx.sql);
        return {
          metadata: { ...o, account_sequence: nonce, recent_block_hash: tip?.block_hash },
          suggested_fee: [{ value: fee, currency: { symbol: 'STX', decimals: 6 } }],
        };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/payloads',
    operationId: 'rosetta_construction_payloads',
    summary: 'The unsigned transaction and what to sign',
    body: PayloadsRequest,
    response: PayloadsResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const o = optionsOf(body.operations as OpIn[]);
        if (!o) return fail(400, RosettaErrors.invalidOperation);
        if (!o.amount) fail(400, RosettaErrors.invalidAmount);
        if (!o.fee || typeof o.fee !== 'string') fail(400, RosettaErrors.invalidFees);
        const fee = BigInt(String(o.fee).replace('-', ''));
        const keys = body.public_keys;
        if (!keys) return fail(400, RosettaErrors.emptyPublicKey);
        const sender = o.sender_address;
        if (!sender) fail(400, RosettaErrors.invalidSender);
        const md = body.metadata;
        if (!md || !('account_sequence' in md)) return fail(400, RosettaErrors.missingNonce);
        if (!/^\d+$/.test(String(md.account_sequence))) fail(400, RosettaErrors.invalidParams, { message: 'metadata.account_sequence must be a non-negative integer' });
        const nonce = BigInt(String(md.account_sequence));
        if (keys.length !== 1) fail(400, RosettaErrors.needOnePublicKey);
        if (keys[0].curve_type !== 'secp256k1') fail(400, RosettaErrors.invalidCurveType);
        const publicKey = strip0x(keys[0].hex_bytes);
        let tx: StacksTransactionWire;
        try {
          if (o.type === 'token_transfer') {
            if (!o.token_transfer_recipient_address) fail(400, RosettaErrors.invalidRecipient);
            const memo = typeof md.memo === 'string' ? md.memo : undefined;
            tx = await makeUnsignedSTXTokenTransfer({ recipient: String(o.token_transfer_recipient_address), amount: BigInt(String(o.amount)), fee, publicKey, network, nonce, memo });
          } else if (o.type === 'stack_stx') {
            const pick = (k: string) => (o[k] ?? md[k]) as string | number | undefined;
            const contractAddress = pick('contract_address');
            const contractName = pick('contract_name');
            const poxAddr = pick('pox_addr');
            const burnHeight = pick('burn_block_height');
            const cycles = pick('number_of_cycles');
            if (!poxAddr) fail(400, RosettaErrors.invalidOperation);
            if (!contractAddress) fail(400, RosettaErrors.missingContractAddress);
            if (!contractName) fail(400, RosettaErrors.missingContractName);
            if (!burnHeight || !cycles || !o.amount) fail(400, RosettaErrors.invalidOperation);
            const pox4 = contractName === 'pox-4';
            const signerKey = pick('signer_key');
            const maxAmount = pick('pox_max_amount') ?? String(o.amount);
            const rewardCycle = pick('reward_cycle_id');
            const authId = pick('pox_auth_id');
            if (pox4 && (!signerKey || !maxAmount || !rewardCycle || !authId)) fail(400, RosettaErrors.invalidOperation);
            const signerSignature = pick('signer_signature');
            tx = await stackTx(
              network,
              { address: String(contractAddress), name: String(contractName) },
              { amount: String(o.amount), poxAddr: String(poxAddr), startBurnHeight: String(burnHeight), cycles: String(cycles), signerKey: String(signerKey ?? ''), signerSignature: signerSignature ? String(signerSignature) : undefined, maxAmount: String(maxAmount), authId: String(authId ?? 0) },
              publicKey,
              fee,
              nonce,
            );
          } else if (o.type === 'delegate_stx') {
            if (!isC32(o.delegate_to)) fail(400, RosettaErrors.invalidOperation);
            if (!md.contract_address) fail(400, RosettaErrors.missingContractAddress);
            if (!md.contract_name) fail(400, RosettaErrors.missingContractName);
            if (!o.delegate_to || !o.amount) fail(400, RosettaErrors.invalidOperation);
            tx = await delegateTx(network, o, publicKey, fee, nonce, { address: String(md.contract_address), name: String(md.contract_name) }, md.burn_block_height);
          } else return fail(400, RosettaErrors.invalidOperation);
        } catch (err) {
          if (err instanceof Error && err.constructor.name === 'RosettaFailure') throw err;
          return fail(400, RosettaErrors.invalidOperation, { message: (err as Error).message });
        }
        const preSign = sigHashPreSign(tx.signBegin(), AuthType.Standard, fee, nonce);
        return {
          unsigned_transaction: '0x' + tx.serialize(),
          payloads: [{ address: String(sender), account_identifier: { address: String(sender) }, hex_bytes: preSign, signature_type: 'ecdsa_recovery' }],
        };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/combine',
    operationId: 'rosetta_construction_combine',
    summary: 'The signed transaction from the unsigned one and its signature',
    body: CombineRequest,
    response: CombineResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        const sigs = body.signatures;
        if (sigs.length === 0) fail(400, RosettaErrors.noSignatures);
        const tx = decodeWire(body.unsigned_transaction);
        if (sigs.length !== 1) fail(400, RosettaErrors.needOnlyOneSignature);
        const s = sigs[0];
        if (s.public_key.curve_type !== 'secp256k1') fail(400, RosettaErrors.invalidCurveType);
        const cond = tx.auth.spendingCondition;
        if (!cond || !isSingleSig(cond)) return fail(400, RosettaErrors.invalidTransactionString);
        // Rosetta signatures are r || s || v; Stacks stores v || r || s
        const hex = strip0x(s.hex_bytes);
        if (!/^[0-9a-fA-F]{130}$/.test(hex)) return fail(400, RosettaErrors.invalidSignature);
        const vrs = hex.slice(128) + hex.slice(0, 128);
        const signature = createMessageSignature(vrs);
        let ok = false;
        try {
          ok = verifySignature(hex.slice(0, 128), strip0x(s.signing_payload.hex_bytes), strip0x(s.public_key.hex_bytes));
        } catch {
          ok = false;
        }
        if (!ok) fail(400, RosettaErrors.signatureNotVerified);
        cond.signature = signature;
        return { signed_transaction: '0x' + tx.serialize() };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/parse',
    operationId: 'rosetta_construction_parse',
    summary: 'The operations of a transaction (signed or not)',
    description:
      'As the reference: a transaction its transaction library (@stacks/transactions 6.11.3) cannot read — a tenure change or Nakamoto ' +
      'coinbase, a non-sequential multisig — is refused with code 628, and a contract call with code 612 (the reference cannot list its operations here).',
    body: ParseRequest,
    response: ParseResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        const network = await checkNetwork(ctx, body.network_identifier);
        const tx = decodeWire(body.transaction);
        if (body.signed !== isSigned(tx)) fail(400, RosettaErrors.invalidParams);
        let decoded;
        try {
          decoded = decodeTx(with0x(body.transaction));
        } catch {
          return fail(400, RosettaErrors.invalidTransactionString);
        }
        const api = decoded.api;
        // The reference cannot list a contract call's operations here: it builds them from the stored call (contract,
        // function, arguments), and the transaction it parsed carries none of them, so it always fails (612), whether
        // or not the call was mined.
        if (api.tx_type === 'contract_call') fail(400, RosettaErrors.unknownError);
        let operations: RosettaOperation[];
        try {
          operations = txOperations(
            {
              tx_id: api.tx_id,
              tx_type: api.tx_type,
              status: '',
              fee_rate: api.fee_rate,
              sender_address: api.sender_address,
              token_transfer: api.token_transfer,
              contract_call: api.contract_call ? { ...api.contract_call, function_signature: '' } : undefined,
              tenure_change_payload: api.tenure_change_payload as Record<string, unknown> | undefined,
              raw_result: '',
            },
            { network },
          );
        } catch {
          return fail(400, RosettaErrors.unknownError);
        }
        const out: Record<string, unknown> = { operations };
        if (body.signed) {
          const signers = signersOf(tx, network);
          if (signers) out.account_identifier_signers = signers;
        }
        const memo = parseMemo(api.token_transfer?.memo);
        if (memo) out.metadata = { memo };
        return out;
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/hash',
    operationId: 'rosetta_construction_hash',
    summary: 'The id of a signed transaction',
    description:
      "The id the reference's transaction library computes (the hash of its re-serialization). A transaction that library cannot read — a tenure " +
      'change or Nakamoto coinbase, a non-sequential multisig — is refused with code 628.',
    body: SignedTxRequest,
    response: HashResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        const tx = decodeWire(body.signed_transaction);
        if (!isSigned(tx)) fail(400, RosettaErrors.transactionNotSigned);
        return { transaction_identifier: { hash: '0x' + referenceTxid(tx, Buffer.from(strip0x(body.signed_transaction), 'hex')) } };
      }),
  }),
  rosettaEndpoint({
    path: '/rosetta/v1/construction/submit',
    operationId: 'rosetta_construction_submit',
    summary: 'Broadcast a signed transaction (through the node pool)',
    description: "The node's refusal, or no node answering, is a 400 with code 628 and the reason in `details` (as in the reference).",
    body: SignedTxRequest,
    response: HashResponse,
    errors: [400],
    handler: ({ body }, ctx) =>
      rosettaGuard(async () => {
        await checkNetwork(ctx, body.network_identifier);
        const hex = strip0x(body.signed_transaction);
        const bytes = Buffer.from(/^([0-9a-fA-F]{2})*$/.test(hex) ? hex : '', 'hex');
        let answer;
        try {
          answer = await nodeCall(ctx.nodes?.(), 'POST', '/v2/transactions', { contentType: 'application/octet-stream', data: bytes });
        } catch (err) {
          return fail(400, RosettaErrors.invalidTransactionString, { message: (err as Error).message });
        }
        if (answer.status !== 200) return fail(400, RosettaErrors.invalidTransactionString, { message: answer.text });
        const id = typeof answer.body === 'string' ? answer.body : String(answer.text).replace(/"/g, '');
        return { transaction_identifier: { hash: with0x(id) } };
      }),
  }),
];
