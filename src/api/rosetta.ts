/**
 * The Rosetta error model (the reference's rosetta-constants.ts / rosetta-validate.ts, v8.13.6): every failure is a
 * Rosetta error object `{code, message, retriable, details?}`.
 *
 *  - A body that does not fit the endpoint's schema: the first failure in the order the reference's JSON-schema
 *    validator reports it (a missing required property before an extra property, outer objects before inner ones),
 *    worded like it (`must have required property 'network_identifier'`), mapped to a code by the words it contains
 *    (network_identifier → 613, blockchain → 617, network → 618, block_identifier → 615, transaction_identifier → 616,
 *    operations → 621, any other missing property → 609, anything else → 612), with `details.message`; status 400.
 *  - Then the request's own checks: blockchain not `stacks` → 611, network not the service's → 610, a hash without
 *    `0x` of odd length → 606 / 608, an account that is not a principal → 601.
 */
import type { z } from 'zod';
import { json, type HttpResponse } from '../http/response.js';
import { endpoint, raw, type Endpoint, type EndpointSpec, type RawReply } from './endpoint.js';
import { RosettaErrorResponse } from './schemas/rosetta.js';
import { PRINCIPAL_PATTERN } from '../chain/principal.js';
import type { ApiContext } from './context.js';
import { recordedNetwork } from '../store/network.js';
import { CHAIN_ID_MAINNET, CHAIN_ID_TESTNET } from '../config.js';
import { PulseError } from '../errors.js';

export interface RosettaErrorBody {
  code: number;
  message: string;
  retriable: boolean;
  details?: Record<string, unknown>;
}

const e = (code: number, message: string, retriable: boolean): RosettaErrorBody => ({ code, message, retriable });

export const RosettaErrors = {
  invalidAccount: e(601, 'Invalid Account.', true),
  insufficientFunds: e(602, 'Insufficient Funds.', false),
  accountEmpty: e(603, 'Account is empty.', false),
  invalidBlockIndex: e(604, 'Invalid block index.', false),
  blockNotFound: e(605, 'Block not found.', true),
  invalidBlockHash: e(606, 'Invalid block hash.', true),
  transactionNotFound: e(607, 'Transaction not found.', true),
  invalidTransactionHash: e(608, 'Invalid transaction hash.', true),
  invalidParams: e(609, 'Invalid params.', false),
  invalidNetwork: e(610, 'Invalid network.', false),
  invalidBlockchain: e(611, 'Invalid blockchain.', false),
  unknownError: e(612, 'Unknown error.', false),
  emptyNetworkIdentifier: e(613, 'Network identifier object is null.', false),
  emptyAccountIdentifier: e(614, 'Account identifier object is null.', false),
  invalidBlockIdentifier: e(615, 'Block identifier is null.', false),
  invalidTransactionIdentifier: e(616, 'Transaction identifier is null.', true),
  emptyBlockchain: e(617, 'Blockchain name is null.', false),
  emptyNetwork: e(618, 'Network name is null.', false),
  invalidCurveType: e(619, 'Invalid curve type.', false),
  invalidPublicKey: e(620, 'invalid public key.', false),
  invalidOperation: e(621, 'Invalid operation', false),
  invalidFee: e(622, 'Invalid fee', false),
  invalidCurrencySymbol: e(623, 'Invalid symbol', false),
  invalidCurrencyDecimals: e(624, 'Invalid currency decimals', false),
  invalidTransactionType: e(625, 'Invalid transaction type', false),
  invalidSender: e(626, 'Invalid sender address', false),
  invalidRecipient: e(627, 'Invalid recipient address', false),
  invalidTransactionString: e(628, 'Invalid transaction string', false),
  transactionNotSigned: e(629, 'Transaction not signed', false),
  invalidAmount: e(630, 'Amount not available', false),
  invalidFees: e(631, 'Fees not available', false),
  emptyPublicKey: e(632, 'Public key not available', false),
  noSignatures: e(633, 'no signature found', false),
  invalidSignature: e(634, 'Invalid Signature', false),
  signatureNotVerified: e(635, 'Signature(s) not verified with this public key(s)', false),
  needOnePublicKey: e(636, 'Need one public key for single signature', false),
  needOnlyOneSignature: e(637, 'Need only one signature', false),
  signatureTypeNotSupported: e(638, 'Signature type not supported.', false),
  missingTransactionSize: e(639, 'Transaction size required to calculate total fee.', false),
  stackingEligibityError: e(640, 'Account not eligible for stacking.', false),
  invalidSubAccount: e(641, 'Invalid sub-account', false),
  missingSenderAddress: e(642, 'Missing sender address', false),
  missingNonce: e(643, 'Missing transaction nonce', false),
  missingContractAddress: e(644, 'Missing contract address', false),
  missingContractName: e(645, 'Missing contract name', false),
} as const;

export const ROSETTA_VERSION = '1.4.6';

export const OPERATION_TYPES = [
  'token_transfer',
  'contract_call',
  'smart_contract',
  'coinbase',
  'poison_microblock',
  'fee',
  'mint',
  'burn',
  'miner_reward',
  'stx_lock',
  'stx_unlock',
  'stack_stx',
  'delegate_stx',
  'revoke_delegate_stx',
  'tenure_change',
] as const;

export const OPERATION_STATUSES = [
  { status: 'success', successful: true },
  { status: 'pending', successful: true },
  { status: 'abort_by_response', successful: false },
  { status: 'abort_by_post_condition', successful: false },
];

/**
 * The answer when a call needs the Stacks node and none is configured or reachable: a Rosetta error object (code 612,
 * from the listed errors, so /network/options stays as it was), retriable, the reason in `details`, status 503.
 */
export function nodeUnavailableReply(reason: string): RawReply {
  return rosettaReply(503, { ...RosettaErrors.unknownError, retriable: true, details: { message: `no Stacks node: ${reason}` } });
}

/** A Rosetta failure thrown inside a handler (rosettaHandler turns it into the answer). */
export class RosettaFailure extends PulseError {
  constructor(
    readonly status: number,
    readonly body: RosettaErrorBody,
  ) {
    super(body.message);
  }
}

export const fail = (status: number, body: RosettaErrorBody, details?: Record<string, unknown>): never => {
  throw new RosettaFailure(status, details ? { ...body, details } : { ...body });
};

export function rosettaReply(status: number, body: RosettaErrorBody): RawReply {
  return raw(json(status, body));
}

/** Runs a handler body; a RosettaFailure becomes its error object. */
export async function rosettaGuard(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RosettaFailure) return rosettaReply(err.status, err.body);
    throw err;
  }
}

// ---- schema failures ---------------------------------------------------------------------------------------------

type Issue = z.core.$ZodIssue;

const isMissing = (i: Issue) => i.code === 'invalid_type' && /received undefined$/.test(i.message);

/** The failure the reference's validator (ajv, first error) reports, in its words. */
export function ajvStyleMessage(issues: Issue[]): string {
  if (!issues.length) return 'error';
  const rank = (i: Issue): [number, number] => {
    if (isMissing(i)) return [i.path.length - 1, 0];
    if (i.code === 'unrecognized_keys') return [i.path.length, 1];
    return [i.path.length, 2];
  };
  const first = [...issues].sort((a, b) => {
    const [la, ka] = rank(a);
    const [lb, kb] = rank(b);
    return la - lb || ka - kb;
  })[0];
  if (isMissing(first)) return `must have required property '${String(first.path[first.path.length - 1])}'`;
  if (first.code === 'unrecognized_keys') return 'must NOT have additional properties';
  if (first.code === 'invalid_type') {
    const expected = (first as Issue & { expected: string }).expected;
    return `must be ${expected === 'int' || expected === 'number' ? 'integer' : expected}`;
  }
  return first.message;
}

/** The reference's makeRosettaError: the error object for a schema failure message. */
export function schemaError(message: string): RosettaErrorBody {
  const withDetails = (b: RosettaErrorBody) => ({ ...b, details: { message } });
  if (/network_identifier/.test(message)) return withDetails(RosettaErrors.emptyNetworkIdentifier);
  if (/blockchain/.test(message)) return withDetails(RosettaErrors.emptyBlockchain);
  if (/network/.test(message)) return withDetails(RosettaErrors.emptyNetwork);
  if (/block_identifier/.test(message)) return withDetails(RosettaErrors.invalidBlockIdentifier);
  if (/transaction_identifier/.test(message)) return withDetails(RosettaErrors.invalidTransactionIdentifier);
  if (/operations/.test(message)) return withDetails(RosettaErrors.invalidOperation);
  if (/must have required property/.test(message)) return withDetails(RosettaErrors.invalidParams);
  return { ...RosettaErrors.unknownError };
}

/**
 * The endpoint's `invalid` hook: a body that is not JSON → 609; an empty body is read as `{}` (what the reference's
 * JSON body parser makes of it), so it names the first required property; otherwise the schema failure.
 */
export function rosettaInvalid(firstRequired: string | undefined) {
  return (message: string, issues: Issue[]): HttpResponse => {
    if (message === 'body is not valid JSON') return json(400, { ...RosettaErrors.invalidParams, details: { message } });
    if (message === 'body must be a JSON document') {
      const m = firstRequired ? `must have required property '${firstRequired}'` : 'must be object';
      return json(400, schemaError(m));
    }
    return json(400, schemaError(ajvStyleMessage(issues)));
  };
}

/**
 * The reference's Rosetta routes parse bodies with express.json()'s default limit, 100 kB (102,400 bytes); a larger
 * body (a big contract deploy to /construction/parse or /hash) fails there before any Rosetta check, so it is a 413
 * here too.
 */
export const ROSETTA_BODY_LIMIT = 100 * 1024;

/**
 * A Rosetta endpoint: POST with a JSON body of at most ROSETTA_BODY_LIMIT bytes, tagged Rosetta, errors as Rosetta
 * error objects (schema failures worded as the reference's validator words them, `network_identifier` the first
 * required member unless `invalid` says otherwise).
 */
export function rosettaEndpoint<B extends z.ZodType>(
  spec: Omit<EndpointSpec<undefined, undefined, B>, 'method' | 'tags' | 'errorResponse'>,
): Endpoint {
  return endpoint<undefined, undefined, B>({
    method: 'POST',
    tags: ['Rosetta'],
    errorResponse: RosettaErrorResponse,
    invalid: rosettaInvalid('network_identifier'),
    bodyLimit: ROSETTA_BODY_LIMIT,
    ...spec,
  });
}

// ---- request checks ----------------------------------------------------------------------------------------------

export type RosettaNetwork = 'mainnet' | 'testnet';

/**
 * The network this service answers for: STACKS_CHAIN_ID when set, else the network the database adopted from its
 * first transaction (sql/0016_chain_network.sql); undefined while neither is known (an empty database without
 * STACKS_CHAIN_ID), when both networks are listed and accepted.
 */
export async function serviceNetwork(ctx: ApiContext): Promise<RosettaNetwork | undefined> {
  const id = ctx.chainId ?? (await recordedNetwork(ctx.sql));
  return id === CHAIN_ID_MAINNET ? 'mainnet' : id === CHAIN_ID_TESTNET ? 'testnet' : undefined;
}

export interface NetworkIdentifier {
  blockchain: string;
  network: string;
}

/** The blockchain and network of a request (611 / 610); returns the network the request is answered for. */
export async function checkNetwork(ctx: ApiContext, id: NetworkIdentifier): Promise<RosettaNetwork> {
  if (id.blockchain !== 'stacks') fail(400, RosettaErrors.invalidBlockchain);
  const net = await serviceNetwork(ctx);
  if (net !== undefined && id.network !== net) fail(400, RosettaErrors.invalidNetwork);
  if (net === undefined && id.network !== 'mainnet' && id.network !== 'testnet') fail(400, RosettaErrors.invalidNetwork);
  return (net ?? id.network) as RosettaNetwork;
}

/** A hash as the reference takes it: `0x` added when missing; a bare hash of odd length is refused. */
export function hashParam(hash: string, invalid: RosettaErrorBody): string {
  if (hash.startsWith('0x')) return hash;
  if (hash.length % 2 !== 0) fail(400, invalid);
  return '0x' + hash;
}

const PRINCIPAL = new RegExp(PRINCIPAL_PATTERN);
export function checkAccount(address: string): void {
  if (!PRINCIPAL.test(address)) fail(400, RosettaErrors.invalidAccount);
}

export const isHex = (h: string) => /^0x([0-9a-fA-F]{2})*$/.test(h);
