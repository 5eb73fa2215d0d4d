/**
 * Transactions and events as the REST API prints them (src/views/txs.ts txJson/mempoolTxJson, src/chain/events.ts).
 */
import { z } from 'zod';
import {
  Amount,
  ClarityValue,
  ContractId,
  Count,
  HashOrEmpty,
  Height,
  Hex,
  IsoTime,
  IsoTimeOrEmpty,
  Principal,
  PrincipalOrEmpty,
  StacksAddress,
  TxId,
  UnixTime,
  component,
} from './common.js';

// ---- events ----------------------------------------------------------------------------------------------------

const AssetEventType = z.enum(['transfer', 'mint', 'burn']);
const eventBase = { event_index: Count.describe('index of the event within its transaction'), tx_id: TxId };

export const SmartContractLogEvent = component(
  'SmartContractLogEvent',
  z.object({
    ...eventBase,
    event_type: z.literal('smart_contract_log'),
    contract_log: z.object({ contract_id: ContractId, topic: z.string(), value: ClarityValue }),
  }),
);

export const StxLockEvent = component(
  'StxLockEvent',
  z.object({
    ...eventBase,
    event_type: z.literal('stx_lock'),
    stx_lock_event: z.object({ locked_amount: Amount, unlock_height: Height.describe('burn block height'), locked_address: Principal }),
  }),
);

export const StxAssetEvent = component(
  'StxAssetEvent',
  z.object({
    ...eventBase,
    event_type: z.literal('stx_asset'),
    asset: z.object({
      asset_event_type: AssetEventType,
      sender: PrincipalOrEmpty,
      recipient: PrincipalOrEmpty,
      amount: Amount,
      memo: Hex.optional(),
    }),
  }),
);

export const FungibleTokenAssetEvent = component(
  'FungibleTokenAssetEvent',
  z.object({
    ...eventBase,
    event_type: z.literal('fungible_token_asset'),
    asset: z.object({
      asset_event_type: AssetEventType,
      asset_id: z.string().describe('`<contract_id>::<token name>`'),
      sender: PrincipalOrEmpty,
      recipient: PrincipalOrEmpty,
      amount: Amount,
    }),
  }),
);

export const NonFungibleTokenAssetEvent = component(
  'NonFungibleTokenAssetEvent',
  z.object({
    ...eventBase,
    event_type: z.literal('non_fungible_token_asset'),
    asset: z.object({
      asset_event_type: AssetEventType,
      asset_id: z.string().describe('`<contract_id>::<asset name>`'),
      sender: PrincipalOrEmpty,
      recipient: PrincipalOrEmpty,
      value: ClarityValue,
    }),
  }),
);

export const TxEvent = component(
  'TransactionEvent',
  z
    .discriminatedUnion('event_type', [
      SmartContractLogEvent,
      StxLockEvent,
      StxAssetEvent,
      FungibleTokenAssetEvent,
      NonFungibleTokenAssetEvent,
    ])
    .describe('An event of a transaction; `event_type` says which payload member it has'),
);

// ---- post conditions ---------------------------------------------------------------------------------------------

const PostConditionPrincipal = component(
  'PostConditionPrincipal',
  z.discriminatedUnion('type_id', [
    z.object({ type_id: z.literal('principal_origin') }),
    z.object({ type_id: z.literal('principal_standard'), address: StacksAddress }),
    z.object({ type_id: z.literal('principal_contract'), address: StacksAddress, contract_name: z.string() }),
  ]),
);

const PostConditionAsset = z.object({ contract_name: z.string(), asset_name: z.string(), contract_address: StacksAddress });

export const PostCondition = component(
  'PostCondition',
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('stx'),
      condition_code: z.string().describe('e.g. sent_equal_to, sent_less_than_or_equal_to'),
      amount: Amount,
      principal: PostConditionPrincipal,
    }),
    z.object({
      type: z.literal('fungible'),
      condition_code: z.string(),
      amount: Amount,
      principal: PostConditionPrincipal,
      asset: PostConditionAsset,
    }),
    z.object({
      type: z.literal('non_fungible'),
      condition_code: z.string().describe('e.g. sent, not_sent'),
      principal: PostConditionPrincipal,
      asset: PostConditionAsset,
      asset_value: ClarityValue,
    }),
  ]),
);

// ---- transaction payloads ------------------------------------------------------------------------------------------

const FunctionArg = z.object({
  hex: Hex,
  repr: z.string(),
  name: z.string().describe("from the contract's ABI ('' when unknown)"),
  type: z.string().describe('Clarity type, e.g. `uint`, `(buff 20)`'),
});

const payloads = {
  token_transfer: {
    tx_type: z.literal('token_transfer'),
    token_transfer: z.object({ recipient_address: Principal, amount: Amount, memo: Hex }),
  },
  smart_contract: {
    tx_type: z.literal('smart_contract'),
    smart_contract: z.object({ clarity_version: z.int().nullable(), contract_id: ContractId, source_code: z.string() }),
  },
  contract_call: {
    tx_type: z.literal('contract_call'),
    contract_call: z.object({
      contract_id: ContractId,
      function_name: z.string(),
      function_signature: z.string().describe("e.g. `(define-public (transfer (amount uint)))`; '' without the contract's ABI"),
      function_args: z.array(FunctionArg).optional().describe('absent with exclude_function_args=true'),
    }),
  },
  poison_microblock: {
    tx_type: z.literal('poison_microblock'),
    poison_microblock: z.object({ microblock_header_1: Hex, microblock_header_2: Hex }),
  },
  coinbase: {
    tx_type: z.literal('coinbase'),
    coinbase_payload: z.object({ data: Hex, alt_recipient: Principal.nullable(), vrf_proof: Hex.optional() }),
  },
  tenure_change: {
    tx_type: z.literal('tenure_change'),
    tenure_change_payload: z.object({
      tenure_consensus_hash: Hex,
      prev_tenure_consensus_hash: Hex,
      burn_view_consensus_hash: Hex,
      previous_tenure_end: Hex,
      previous_tenure_blocks: Count,
      cause: z.string().describe('block_found or extended'),
      pubkey_hash: Hex,
    }),
  },
} as const;

/** The fields every transaction form has (they depend only on the raw transaction). */
const txBase = {
  tx_id: TxId,
  nonce: Count,
  fee_rate: Amount.describe('fee in micro-STX'),
  sender_address: StacksAddress,
  sponsored: z.boolean(),
  sponsor_nonce: Count.optional().describe('sponsored transactions only'),
  sponsor_address: StacksAddress.optional().describe('sponsored transactions only'),
  post_condition_mode: z.enum(['allow', 'deny']),
  post_conditions: z.array(PostCondition),
  anchor_mode: z.enum(['on_chain_only', 'off_chain_only', 'any']),
};

const minedFields = {
  ...txBase,
  block_hash: HashOrEmpty.describe("'0x' while only in an unconfirmed microblock"),
  block_height: Height,
  block_time: UnixTime,
  block_time_iso: IsoTimeOrEmpty,
  burn_block_time: z.int().min(-1).describe('-1 while only in an unconfirmed microblock'),
  burn_block_height: z.int().min(-1).describe('-1 while only in an unconfirmed microblock'),
  burn_block_time_iso: IsoTimeOrEmpty,
  parent_burn_block_time: UnixTime,
  parent_burn_block_time_iso: IsoTimeOrEmpty,
  canonical: z.boolean(),
  tx_index: Count,
  tx_status: z.enum(['success', 'abort_by_response', 'abort_by_post_condition']),
  tx_result: ClarityValue,
  event_count: Count,
  parent_block_hash: HashOrEmpty,
  is_unanchored: z.boolean(),
  microblock_hash: HashOrEmpty.describe("'0x' when not in a microblock"),
  microblock_sequence: z.int().describe('2147483647 when not in a microblock'),
  microblock_canonical: z.boolean(),
  execution_cost_read_count: Count,
  execution_cost_read_length: Count,
  execution_cost_runtime: Count,
  execution_cost_write_count: Count,
  execution_cost_write_length: Count,
  vm_error: z.string().nullable(),
  events: z.array(TxEvent).describe('paged with event_limit/event_offset on lookups; [] in lists'),
};

const MempoolTxStatus = z.union([
  z.literal('pending'),
  z.string().regex(/^dropped_[a-z_]+$/).describe('dropped_replace_by_fee, dropped_replace_across_fork, dropped_too_expensive, …'),
]);

const mempoolFields = {
  ...txBase,
  tx_status: MempoolTxStatus,
  replaced_by_tx_id: TxId.nullable(),
  receipt_time: UnixTime,
  receipt_time_iso: IsoTime,
};

type PayloadKey = keyof typeof payloads;
const PAYLOAD_KEYS = Object.keys(payloads) as PayloadKey[];

const pascal = (s: string) => s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

function variants<F extends z.ZodRawShape>(fields: F, prefix: string) {
  return PAYLOAD_KEYS.map((k) => component(`${prefix}${pascal(k)}`, z.object({ ...fields, ...payloads[k] })));
}

export const MinedTx = component(
  'Transaction',
  z
    .discriminatedUnion('tx_type', variants(minedFields, 'Transaction') as unknown as [z.ZodObject, z.ZodObject])
    .describe('A mined transaction (anchored, or unanchored in a microblock); `tx_type` says which payload member it has'),
);

export const MempoolTx = component(
  'MempoolTransaction',
  z
    .discriminatedUnion('tx_type', variants(mempoolFields, 'MempoolTransaction') as unknown as [z.ZodObject, z.ZodObject])
    .describe('A mempool transaction (pending, or dropped with its reason in tx_status)'),
);

export const AnyTx = z.union([MinedTx, MempoolTx]);

// ---- responses -----------------------------------------------------------------------------------------------------

export const TxLookupResponse = component(
  'TransactionLookup',
  AnyTx.describe('A mined transaction, or a mempool one (pending or dropped)'),
);

export const TxMultipleResponse = component(
  'TransactionMultipleLookup',
  z
    .record(
      z.string(),
      z.union([
        z.object({ found: z.literal(true), result: AnyTx }),
        z.object({ found: z.literal(false), result: z.object({ tx_id: z.string() }) }),
      ]),
    )
    .describe('Keyed by the requested ids as given, in request order'),
);

export const MempoolListResponse = component(
  'MempoolTransactionList',
  z.object({ limit: Count, offset: Count, total: Count, results: z.array(MempoolTx) }),
);

const Percentiles = z
  .object({ p25: z.number().nullable(), p50: z.number().nullable(), p75: z.number().nullable(), p95: z.number().nullable() })
  .describe('null when there is no pending transaction of that type');

function perType<T extends z.ZodType>(v: T) {
  return z.object({ token_transfer: v, smart_contract: v, contract_call: v, poison_microblock: v });
}

export const MempoolStatsResponse = component(
  'MempoolStats',
  z.object({
    tx_type_counts: perType(Count),
    tx_simple_fee_averages: perType(Percentiles).describe('fee rates (micro-STX)'),
    tx_ages: perType(Percentiles).describe('ages in blocks'),
    tx_byte_sizes: perType(Percentiles).describe('sizes in bytes'),
  }),
);

export const TxEventListResponse = component(
  'TransactionEventList',
  z.object({ limit: Count, offset: Count, results: z.array(TxEvent) }),
);

export const ContractEventListResponse = component(
  'ContractEventList',
  z.object({ limit: Count, offset: Count, results: z.array(TxEvent) }),
);

export const ContractResponse = component(
  'Contract',
  z.object({
    tx_id: TxId.describe('the deploy transaction'),
    canonical: z.boolean(),
    contract_id: ContractId,
    block_height: Height,
    clarity_version: z.int().nullable(),
    source_code: z.string(),
    abi: z.string().nullable().describe('the contract ABI as JSON text'),
  }),
);

export type TxEventJson = z.infer<typeof TxEvent>;
export type MinedTxJson = z.infer<typeof MinedTx>;
export type MempoolTxJson = z.infer<typeof MempoolTx>;
export type MempoolStats = z.infer<typeof MempoolStatsResponse>;
export type ContractJson = z.infer<typeof ContractResponse>;

