/**
 * Zod (v4) schemas for every message a Stacks node POSTs to the event observer.
 *
 * Written from the real payloads in shared/fixtures/events/*.tsv. Rules:
 *  - every object is "loose": unknown keys (fields newer nodes may add) are kept, never rejected;
 *  - fields every fixture carries are required, the others optional;
 *  - a field is nullable only where the node is known to send null for it;
 *  - 0x-prefixed hex is validated (`^0x[0-9a-fA-F]*$`, even length), hashes as 32-byte hex;
 *  - heights / indexes / costs are non-negative integers, amounts decimal strings.
 *
 * `validateObserverMessage(path, body)` normalises the path and returns either the parsed message or
 * a one-line failure naming the offending field, e.g. `body/transactions/0/raw_tx: expected
 * 0x-prefixed hex string` or `body/block_height: required`.
 */
import { checkClarityValue, MalformedWireError } from '../chain/wire-guard.js';
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Primitive helpers
// ---------------------------------------------------------------------------------------------

type ErrFn = (iss: { input?: unknown; code?: string }) => string;

/** Error function: `required` for a missing value, otherwise the given expectation. */
const expect =
  (what: string): ErrFn =>
  (iss) =>
    iss.input === undefined ? 'required' : what;

const HEX_0X_RE = /^0x(?:[0-9a-fA-F]{2})*$/;
const BARE_HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;
const MAYBE_0X_HEX_RE = /^(?:0x)?(?:[0-9a-fA-F]{2})*$/;
const DECIMAL_RE = /^(?:0|[1-9][0-9]*)$/;

const HEX_MSG = 'expected 0x-prefixed hex string';

/** 0x-prefixed hex string of any (whole-byte) length, e.g. a raw transaction. */
export const hexString = z.string({ error: expect(HEX_MSG) }).regex(HEX_0X_RE, { error: HEX_MSG });

/**
 * A serialized Clarity value (0x hex) whose type ids are all known: the native codec spins forever on an unknown one
 * (src/chain/wire-guard.ts), so such a value is a validation error naming its field.
 */
export const clarityHex = hexString.superRefine((v, ctx) => {
  try {
    checkClarityValue(v);
  } catch (err) {
    if (!(err instanceof MalformedWireError)) throw err;
    ctx.addIssue({ code: 'custom', message: `not a serialized Clarity value: ${err.message}` });
  }
});

/** 0x-prefixed hex string of exactly `bytes` bytes (`bytes * 2` hex digits). */
export function hexBytes(bytes: number) {
  const msg = `expected ${bytes}-byte 0x-prefixed hex string`;
  return z
    .string({ error: expect(msg) })
    .regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`), { error: msg });
}

/** 32-byte 0x-prefixed hash (block hashes, txids, index block hashes ...). */
export const hash32 = hexBytes(32);
/** 20-byte 0x-prefixed hash (consensus hashes). */
export const hash20 = hexBytes(20);

/** Hex without a 0x prefix (signer_bitvec, signer signatures, signing keys, PoX address bytes). */
const BARE_HEX_MSG = 'expected hex string without 0x prefix';
export const bareHexString = z
  .string({ error: expect(BARE_HEX_MSG) })
  .regex(BARE_HEX_RE, { error: BARE_HEX_MSG });

/** Hex with or without a 0x prefix (stx_transfer_event.memo is sent bare by current nodes). */
const MAYBE_HEX_MSG = 'expected hex string';
const maybePrefixedHex = z
  .string({ error: expect(MAYBE_HEX_MSG) })
  .regex(MAYBE_0X_HEX_RE, { error: MAYBE_HEX_MSG });

const UINT_MSG = 'expected non-negative integer';
/** Non-negative safe integer (heights, indexes, timestamps, costs, satoshi amounts). */
export const uint = z
  .number({ error: expect(UINT_MSG) })
  .int({ error: UINT_MSG })
  .min(0, { error: UINT_MSG });

const DEC_MSG = 'expected non-negative decimal integer string';
/** Non-negative integer as a decimal string (micro-STX and token amounts, u128 values). */
export const decimalString = z.string({ error: expect(DEC_MSG) }).regex(DECIMAL_RE, { error: DEC_MSG });

const str = z.string({ error: expect('expected string') });
const bool = z.boolean({ error: expect('expected boolean') });

/** A loose object (unknown keys are kept). */
function obj<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.looseObject(shape, { error: expect('expected object') });
}
function arr<T extends z.core.SomeType>(item: T) {
  return z.array(item, { error: expect('expected array') });
}

/** Clarity value in the node's ad-hoc JSON encoding: any JSON, kept as-is. */
const clarityJson = z.unknown();

// ---------------------------------------------------------------------------------------------
// Events (discriminated by `type`, payload object named after the type)
// ---------------------------------------------------------------------------------------------

const eventBase = {
  txid: hash32,
  event_index: uint,
  committed: bool,
};

export const StxTransferEventSchema = obj({
  ...eventBase,
  type: z.literal('stx_transfer_event'),
  stx_transfer_event: obj({
    sender: str,
    recipient: str,
    amount: decimalString,
    memo: maybePrefixedHex.optional(),
  }),
});

export const StxMintEventSchema = obj({
  ...eventBase,
  type: z.literal('stx_mint_event'),
  stx_mint_event: obj({ recipient: str, amount: decimalString }),
});

export const StxBurnEventSchema = obj({
  ...eventBase,
  type: z.literal('stx_burn_event'),
  stx_burn_event: obj({ sender: str, amount: decimalString }),
});

export const StxLockEventSchema = obj({
  ...eventBase,
  type: z.literal('stx_lock_event'),
  stx_lock_event: obj({
    locked_amount: decimalString,
    unlock_height: decimalString,
    locked_address: str,
    /** Sent by newer nodes (pox-2+); absent in old mainnet payloads. */
    contract_identifier: str.optional(),
  }),
});

export const FtTransferEventSchema = obj({
  ...eventBase,
  type: z.literal('ft_transfer_event'),
  ft_transfer_event: obj({ asset_identifier: str, sender: str, recipient: str, amount: decimalString }),
});

export const FtMintEventSchema = obj({
  ...eventBase,
  type: z.literal('ft_mint_event'),
  ft_mint_event: obj({ asset_identifier: str, recipient: str, amount: decimalString }),
});

export const FtBurnEventSchema = obj({
  ...eventBase,
  type: z.literal('ft_burn_event'),
  ft_burn_event: obj({ asset_identifier: str, sender: str, amount: decimalString }),
});

export const NftTransferEventSchema = obj({
  ...eventBase,
  type: z.literal('nft_transfer_event'),
  nft_transfer_event: obj({
    asset_identifier: str,
    sender: str,
    recipient: str,
    value: clarityJson,
    raw_value: clarityHex,
  }),
});

export const NftMintEventSchema = obj({
  ...eventBase,
  type: z.literal('nft_mint_event'),
  nft_mint_event: obj({ asset_identifier: str, recipient: str, value: clarityJson, raw_value: clarityHex }),
});

export const NftBurnEventSchema = obj({
  ...eventBase,
  type: z.literal('nft_burn_event'),
  nft_burn_event: obj({ asset_identifier: str, sender: str, value: clarityJson, raw_value: clarityHex }),
});

export const ContractEventSchema = obj({
  ...eventBase,
  type: z.literal('contract_event'),
  contract_event: obj({
    contract_identifier: str,
    topic: str,
    value: clarityJson,
    raw_value: clarityHex,
  }),
});

export const EVENT_TYPES = [
  'stx_transfer_event',
  'stx_mint_event',
  'stx_burn_event',
  'stx_lock_event',
  'ft_transfer_event',
  'ft_mint_event',
  'ft_burn_event',
  'nft_transfer_event',
  'nft_mint_event',
  'nft_burn_event',
  'contract_event',
] as const;
export type CoreNodeEventType = (typeof EVENT_TYPES)[number];

export const CoreNodeEventSchema = z.discriminatedUnion(
  'type',
  [
    StxTransferEventSchema,
    StxMintEventSchema,
    StxBurnEventSchema,
    StxLockEventSchema,
    FtTransferEventSchema,
    FtMintEventSchema,
    FtBurnEventSchema,
    NftTransferEventSchema,
    NftMintEventSchema,
    NftBurnEventSchema,
    ContractEventSchema,
  ],
  {
    error: (iss) => {
      if (iss.code === 'invalid_union') {
        const t = (iss.input as { type?: unknown } | null)?.type;
        return t === undefined
          ? 'required'
          : `unknown event type ${JSON.stringify(t)} (expected one of ${EVENT_TYPES.join(', ')})`;
      }
      return iss.input === undefined ? 'required' : 'expected event object';
    },
  },
);
export type CoreNodeEvent = z.infer<typeof CoreNodeEventSchema>;
export type StxTransferEvent = z.infer<typeof StxTransferEventSchema>;
export type StxMintEvent = z.infer<typeof StxMintEventSchema>;
export type StxBurnEvent = z.infer<typeof StxBurnEventSchema>;
export type StxLockEvent = z.infer<typeof StxLockEventSchema>;
export type FtTransferEvent = z.infer<typeof FtTransferEventSchema>;
export type FtMintEvent = z.infer<typeof FtMintEventSchema>;
export type FtBurnEvent = z.infer<typeof FtBurnEventSchema>;
export type NftTransferEvent = z.infer<typeof NftTransferEventSchema>;
export type NftMintEvent = z.infer<typeof NftMintEventSchema>;
export type NftBurnEvent = z.infer<typeof NftBurnEventSchema>;
export type ContractEvent = z.infer<typeof ContractEventSchema>;

// ---------------------------------------------------------------------------------------------
// Transactions
// ---------------------------------------------------------------------------------------------

export const ExecutionCostSchema = obj({
  read_count: uint,
  read_length: uint,
  runtime: uint,
  write_count: uint,
  write_length: uint,
});
export type ExecutionCost = z.infer<typeof ExecutionCostSchema>;

export const TX_STATUSES = ['success', 'abort_by_response', 'abort_by_post_condition'] as const;
export type CoreNodeTxStatus = (typeof TX_STATUSES)[number];
const txStatus = z.enum(TX_STATUSES, {
  error: expect(`expected one of ${TX_STATUSES.join(', ')}`),
});

/** Contract ABI (clarity_version / epoch only on newer nodes); contents kept loose. */
export const ContractAbiSchema = obj({
  functions: arr(z.unknown()).optional(),
  variables: arr(z.unknown()).optional(),
  maps: arr(z.unknown()).optional(),
  fungible_tokens: arr(z.unknown()).optional(),
  non_fungible_tokens: arr(z.unknown()).optional(),
  epoch: str.optional(),
  clarity_version: str.optional(),
});
export type ContractAbi = z.infer<typeof ContractAbiSchema>;

const txBase = {
  txid: hash32,
  tx_index: uint,
  raw_tx: hexString,
  raw_result: clarityHex,
  status: txStatus,
  execution_cost: ExecutionCostSchema,
  /** Null unless the tx deployed a contract. Newer nodes send `contract_interface` instead. */
  contract_abi: ContractAbiSchema.nullable().optional(),
  contract_interface: ContractAbiSchema.nullable().optional(),
  /** Burnchain-originated operation (stack-stx, transfer-stx ... via Bitcoin); null otherwise. */
  burnchain_op: obj({}).nullable().optional(),
  vm_error: str.nullable().optional(),
};

/** Transaction inside /new_block: microblock fields are null for anchored-block txs. */
export const BlockTransactionSchema = obj({
  ...txBase,
  microblock_sequence: uint.nullable(),
  microblock_hash: hash32.nullable(),
  microblock_parent_hash: hash32.nullable(),
});
export type BlockTransaction = z.infer<typeof BlockTransactionSchema>;

/** Transaction inside /new_microblocks: microblock fields always set. */
export const MicroblockTransactionSchema = obj({
  ...txBase,
  microblock_sequence: uint,
  microblock_hash: hash32,
  microblock_parent_hash: hash32,
});
export type MicroblockTransaction = z.infer<typeof MicroblockTransactionSchema>;

// ---------------------------------------------------------------------------------------------
// /new_block
// ---------------------------------------------------------------------------------------------

export const MaturedMinerRewardSchema = obj({
  from_index_consensus_hash: hash32,
  from_stacks_block_hash: hash32,
  recipient: str,
  coinbase_amount: decimalString,
  tx_fees_anchored: decimalString,
  tx_fees_streamed_confirmed: decimalString,
  tx_fees_streamed_produced: decimalString,
});
export type MaturedMinerReward = z.infer<typeof MaturedMinerRewardSchema>;

/**
 * PoX reward address as serialised by the node, e.g.
 * `{"Standard": [{"bytes": "<hex>", "version": 26}, "SerializeP2PKH"]}` or `{"Addr20": [...]}` / `{"Addr32": [...]}`.
 */
export const PoxRewardAddressSchema = obj({
  Standard: z
    .tuple([obj({ bytes: bareHexString, version: uint }), str.nullable()], {
      error: expect('expected [address, hash mode] pair'),
    })
    .optional(),
  Addr20: arr(z.unknown()).optional(),
  Addr32: arr(z.unknown()).optional(),
});

export const RewardSetSignerSchema = obj({
  signing_key: bareHexString,
  weight: uint,
  stacked_amt: decimalString,
});

/**
 * One rewarded address: the PoX address object above (stacks-core 2.5/3.0 payloads, as in the fixtures) or, from newer
 * nodes (RewardSetEventPayload serialises them with `to_b58()`), the Bitcoin address string. An object is still
 * validated field by field.
 */
export const RewardedAddressSchema = z.unknown().superRefine((v, ctx) => {
  if (typeof v === 'string') return;
  const r = PoxRewardAddressSchema.safeParse(v, { error: (iss) => (iss.input === undefined ? 'required' : undefined) });
  if (r.success) return;
  for (const issue of r.error.issues) {
    ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path as (string | number)[], input: v });
  }
});

export const RewardSetSchema = obj({
  /** Newer nodes serialise an absent threshold as null. */
  pox_ustx_threshold: decimalString.nullable(),
  rewarded_addresses: arr(RewardedAddressSchema),
  start_cycle_state: obj({ missed_reward_slots: arr(z.unknown()).optional() }).optional(),
  /** Only for cycles with Nakamoto signers. */
  signers: arr(RewardSetSignerSchema).optional(),
});
export type RewardSet = z.infer<typeof RewardSetSchema>;

export const NewBlockMessageSchema = obj({
  block_hash: hash32,
  block_height: uint,
  burn_block_hash: hash32,
  burn_block_height: uint,
  burn_block_time: uint,
  index_block_hash: hash32,
  parent_block_hash: hash32,
  parent_index_block_hash: hash32,
  parent_microblock: hash32,
  parent_microblock_sequence: uint,
  parent_burn_block_hash: hash32,
  parent_burn_block_height: uint,
  parent_burn_block_timestamp: uint,
  miner_txid: hash32,
  events: arr(CoreNodeEventSchema),
  transactions: arr(BlockTransactionSchema),
  matured_miner_rewards: arr(MaturedMinerRewardSchema),
  // --- not sent by old (2.0 era) nodes ---
  anchored_cost: ExecutionCostSchema.optional(),
  confirmed_microblocks_cost: ExecutionCostSchema.optional(),
  pox_v1_unlock_height: uint.optional(),
  pox_v2_unlock_height: uint.optional(),
  pox_v3_unlock_height: uint.optional(),
  // --- Nakamoto-capable nodes ---
  /** Block timestamp (Nakamoto); null for pre-Nakamoto blocks. */
  block_time: uint.nullable().optional(),
  consensus_hash: hash20.optional(),
  /** coinbase height; the reference types it `number | null` (absent before stacks-core 3.0.0.0.0-rc6). */
  tenure_height: uint.nullable().optional(),
  /** Set on the first block of a reward cycle (with reward_set), null otherwise. */
  cycle_number: uint.nullable().optional(),
  reward_set: RewardSetSchema.nullable().optional(),
  signer_bitvec: bareHexString.nullable().optional(),
  /** Sent without 0x by current nodes; the reference accepts both forms. */
  signer_signature: arr(maybePrefixedHex).optional(),
  signer_signature_hash: hash32.optional(),
  miner_signature: hexBytes(65).optional(),
});
export type NewBlockMessage = z.infer<typeof NewBlockMessageSchema>;

// ---------------------------------------------------------------------------------------------
// /new_burn_block
// ---------------------------------------------------------------------------------------------

export const NewBurnBlockMessageSchema = obj({
  burn_block_hash: hash32,
  burn_block_height: uint,
  /** Satoshis. */
  burn_amount: uint,
  reward_recipients: arr(obj({ recipient: str, amt: uint })),
  reward_slot_holders: arr(str),
  consensus_hash: hash20.optional(),
  parent_burn_block_hash: hash32.optional(),
});
export type NewBurnBlockMessage = z.infer<typeof NewBurnBlockMessageSchema>;

// ---------------------------------------------------------------------------------------------
// /new_microblocks
// ---------------------------------------------------------------------------------------------

export const NewMicroblocksMessageSchema = obj({
  parent_index_block_hash: hash32,
  burn_block_hash: hash32,
  burn_block_height: uint,
  burn_block_timestamp: uint,
  transactions: arr(MicroblockTransactionSchema),
  events: arr(CoreNodeEventSchema),
});
export type NewMicroblocksMessage = z.infer<typeof NewMicroblocksMessageSchema>;

// ---------------------------------------------------------------------------------------------
// Mempool
// ---------------------------------------------------------------------------------------------

/** /new_mempool_tx: JSON array of raw transactions (0x hex). */
export const NewMempoolTxMessageSchema = arr(hexString);
export type NewMempoolTxMessage = z.infer<typeof NewMempoolTxMessageSchema>;

/** /drop_mempool_tx. `reason` is e.g. ReplaceByFee, ReplaceAcrossFork, TooExpensive, StaleGarbageCollect, Problematic. */
export const DropMempoolTxMessageSchema = obj({
  dropped_txids: arr(hash32),
  reason: str,
  /** The replacing tx for ReplaceByFee; null or absent otherwise. */
  new_txid: hash32.nullable().optional(),
});
export type DropMempoolTxMessage = z.infer<typeof DropMempoolTxMessageSchema>;

// ---------------------------------------------------------------------------------------------
// Permissive schemas (no fixtures): attachments, stackerdb chunks, block proposal responses
// ---------------------------------------------------------------------------------------------

const uintOrDecimal = z.union([uint, decimalString], { error: expect('expected non-negative integer') });

/** /attachments/new: array of Atlas attachments (BNS zonefiles). All fields optional. */
export const AttachmentSchema = obj({
  attachment_index: uintOrDecimal.optional(),
  index_block_hash: str.optional(),
  block_height: uintOrDecimal.optional(),
  content_hash: str.optional(),
  contract_id: str.optional(),
  metadata: str.optional(),
  tx_id: str.optional(),
  content: str.optional(),
});
export const AttachmentsNewMessageSchema = arr(AttachmentSchema);
export type AttachmentsNewMessage = z.infer<typeof AttachmentsNewMessageSchema>;

/** /stackerdb_chunks: `{contract_id: {issuer, name}, modified_slots: [{slot_id, slot_version, data, sig}]}`. */
export const StackerDbChunksMessageSchema = obj({
  contract_id: z.unknown().optional(),
  modified_slots: arr(obj({})).optional(),
});
export type StackerDbChunksMessage = z.infer<typeof StackerDbChunksMessageSchema>;

/** /proposal_response: block validation result (`{result: "Ok"|"Reject", ...}`); kept fully loose. */
export const ProposalResponseMessageSchema = obj({});
export type ProposalResponseMessage = z.infer<typeof ProposalResponseMessageSchema>;

// ---------------------------------------------------------------------------------------------
// Path registry and validation
// ---------------------------------------------------------------------------------------------

export const OBSERVER_SCHEMAS = {
  '/new_block': NewBlockMessageSchema,
  '/new_burn_block': NewBurnBlockMessageSchema,
  '/new_mempool_tx': NewMempoolTxMessageSchema,
  '/drop_mempool_tx': DropMempoolTxMessageSchema,
  '/new_microblocks': NewMicroblocksMessageSchema,
  '/attachments/new': AttachmentsNewMessageSchema,
  '/stackerdb_chunks': StackerDbChunksMessageSchema,
  '/proposal_response': ProposalResponseMessageSchema,
} as const;

export type ObserverPath = keyof typeof OBSERVER_SCHEMAS;
export const OBSERVER_PATHS = Object.keys(OBSERVER_SCHEMAS) as readonly ObserverPath[];

export type ObserverMessageMap = { [P in ObserverPath]: z.infer<(typeof OBSERVER_SCHEMAS)[P]> };

/** Strips the query string and trailing slashes: `/new_block/` → `/new_block`. */
export function normalizeObserverPath(path: string): string {
  let p = path;
  const q = p.indexOf('?');
  if (q >= 0) p = p.slice(0, q);
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  return p;
}

export function isObserverPath(path: string): path is ObserverPath {
  return Object.prototype.hasOwnProperty.call(OBSERVER_SCHEMAS, path);
}

export type ObserverValidationOk = {
  [P in ObserverPath]: { ok: true; path: P; message: ObserverMessageMap[P] };
}[ObserverPath];

export type ObserverValidationError = {
  ok: false;
  /** `invalid_body`: known path, body fails validation; `unknown_path`: path is not an observer path. */
  code: 'invalid_body' | 'unknown_path';
  /** Normalised path. */
  path: string;
  /** e.g. `body/transactions/0/raw_tx: expected 0x-prefixed hex string`. */
  message: string;
};

export type ObserverValidationResult = ObserverValidationOk | ObserverValidationError;

const MAX_REPORTED_ISSUES = 3;

function formatPath(path: readonly PropertyKey[]): string {
  return ['body', ...path.map((k) => String(k))].join('/');
}

/** Per-parse error map: anything without a schema-level message. */
const fallbackError = (iss: z.core.$ZodRawIssue): string | undefined => {
  if (iss.code === 'invalid_type') {
    if (iss.input === undefined) return 'required';
    return `expected ${iss.expected}`;
  }
  return undefined;
};

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${formatPath(issue.path)}: ${issue.message}`;
}

/** Turns zod issues into a one-line message naming the offending field(s). */
export function formatObserverIssues(issues: readonly z.core.$ZodIssue[]): string {
  const parts = issues.slice(0, MAX_REPORTED_ISSUES).map(describeIssue);
  const more = issues.length - MAX_REPORTED_ISSUES;
  return more > 0 ? `${parts.join('; ')} (+${more} more)` : parts.join('; ');
}

/**
 * Validates an observer POST body against the schema of its path (normalised: query string and
 * trailing slash removed). Unknown paths yield `{ ok: false, code: 'unknown_path' }` (the HTTP
 * layer answers 404 for those); invalid bodies `{ ok: false, code: 'invalid_body' }`.
 */
export function validateObserverMessage(path: string, body: unknown): ObserverValidationResult {
  const p = normalizeObserverPath(path);
  if (!isObserverPath(p)) {
    return { ok: false, code: 'unknown_path', path: p, message: `unknown observer path ${p}` };
  }
  const schema: z.ZodType = OBSERVER_SCHEMAS[p];
  const r = schema.safeParse(body, { error: fallbackError });
  if (!r.success) {
    return { ok: false, code: 'invalid_body', path: p, message: formatObserverIssues(r.error.issues) };
  }
  return { ok: true, path: p, message: r.data } as ObserverValidationOk;
}
