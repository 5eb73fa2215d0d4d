/**
 * POST /rosetta/v1/construction/{derive,preprocess,metadata,payloads,combine,parse,hash,submit}: building, signing
 * and submitting a transaction the Rosetta way, with @stacks/transactions (v7; the reference used 6.11.3, which reads
 * less of the wire format: src/chain/rosetta-wire.ts says what, and decodeWire refuses it like the reference). Offline: derive, preprocess, payloads, combine, parse, hash. metadata and submit need the node pool.
 * Supported operation sets are the reference's: a token transfer (fee, sender, recipient), stack_stx (the PoX contract
 * and cycle come from the node's /v2/pox; pox-4 needs the signer key, and the signer signature when the caller has one),
 * delegate_stx. What each operation type adds to the options, checks and builds is one table,
 * src/chain/rosetta-construction.ts; these routes check the request's shape and read that table.
 */
import { z } from 'zod';
import {
  deserializeTransaction,
  emptyMessageSignature,
  getAddressFromPublicKey,
  isSingleSig,
  sigHashPreSign,
  serializePayload,
  AuthType,
  PayloadType,
  createMessageSignature,
  verifySignature,
  type StacksTransactionWire,
} from '@stacks/transactions';
import { json } from '../../../http/response.js';
import { component } from '../../schemas/common.js';
import { NetworkIdentifier } from '../../schemas/rosetta.js';
import { RosettaErrors, checkNetwork, nodeUnavailableReply, fail, rosettaGuard, rosettaInvalid, type RosettaNetwork, rosettaEndpoint } from '../../rosetta.js';
import { decodeTx } from '../../../chain/tx.js';
import { codec } from '../../../chain/native.js';
import {
  ConstructionRefusal,
  constructionOptions,
  isC32,
  strip0x,
  transactionRule,
  type OperationInput,
  type PoxContract,
} from '../../../chain/rosetta-construction.js';
import { txOperations, parseMemo, type RosettaOperation } from '../../../chain/rosetta-ops.js';
import { readableByReference, referenceTxid } from '../../../chain/rosetta-wire.js';
import { nodeCall, NoNodeError } from '../../../proxy/rpc.js';
import * as store from '../../../store/rosetta.js';
import type { ApiContext } from '../../context.js';
import { PulseError } from '../../../errors.js';

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

type OpIn = z.infer<typeof OperationIn> & OperationInput;

/** Runs a construction step; a rule's refusal becomes its Rosetta error (400). */
async function byRules<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ConstructionRefusal) return fail(400, RosettaErrors[err.error]);
    throw err;
  }
}

type PoxInfo = Partial<PoxContract> & { contract_id?: string };

async function poxInfo(ctx: ApiContext): Promise<PoxContract> {
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
    if (err instanceof NoNodeError) throw new NodeUnavailable(err.message, err);
    throw err;
  }
}

class NodeUnavailable extends PulseError {
  constructor(message: string, cause?: unknown) {
    super(message, { cause, retryable: true });
  }
}

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
        const o = constructionOptions(ops);
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
        const rule = transactionRule(o);
        if (!rule) return fail(400, RosettaErrors.invalidOperation);
        const tx = await byRules(() => rule.sizeTx(o, { network, memo, pox: () => poxInfo(ctx) }));
        o.size = tx.serializeBytes().byteLength;
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
        const rule = transactionRule(o);
        if (!rule) return fail(400, RosettaErrors.invalidTransactionType);
        const payloadTx = await byRules(() => rule.feeTx(o, { network, pox: () => poxInfo(ctx) }));
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
        const o = constructionOptions(body.operations as OpIn[]);
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
          const rule = transactionRule(o);
          if (!rule) return fail(400, RosettaErrors.invalidOperation);
          tx = await rule.unsignedTx(o, md, { network, publicKey, fee, nonce });
        } catch (err) {
          if (err instanceof Error && err.constructor.name === 'RosettaFailure') throw err;
          if (err instanceof ConstructionRefusal) return fail(400, RosettaErrors[err.error]);
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
