/**
 * The /extended/v3/principals/{principal} family (src/api/routes/extended/principals.ts): parameters and answers as the
 * newest reference declares them (src/api/schemas/v3/*.ts, src/api/routes/v3/principals.ts at HEAD). A principal must
 * be a real one of the database's network (checksum and network checked, as on every route); cursors are positions
 * in the page order, parsed here into keys.
 */
import { z } from 'zod';
import { networkChecked } from '../endpoint.js';
import { normalizeHash, principalSchema } from './params.js';
import { Count, component } from './common.js';
import { C32_ALPHABET as C32 } from '../../chain/principal.js';

// ---- parameters ----------------------------------------------------------------------------------------------------

export const V3_ADDRESS_PATTERN = `^[${C32}]{28,41}$`;
export const V3_CONTRACT_PATTERN = `^[${C32}]{28,41}.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}$`;

/** The reference's PrincipalSchema: an address or a contract id (checksum and network checked, plain-word errors). */
export const V3Principal = networkChecked(principalSchema().describe('A Stacks address or a contract identifier `<address>.<contract-name>`'));

/** The reference's AddressSchema: a standard address only (nonces). */
export const V3Address = networkChecked(principalSchema({ contract: false }).describe('A Stacks address (contract principals have no nonces)'));

/** The reference's TransactionIdSchema, normalized to `0x` lower case. */
export const V3TxId = z
  .string()
  .regex(/^(0x)?[a-fA-F0-9]{64}$/)
  .transform(normalizeHash)
  .describe('Transaction id (`0x` optional, any case)');

/** The reference's AssetIdentifierSchema. */
export const V3AssetIdentifier = z
  .string()
  .regex(/^[0123456789ABCDEFGHJKMNPQRSTVWXYZ]{28,41}\.[a-zA-Z]([a-zA-Z0-9]|[-_]){0,39}::[a-zA-Z]([a-zA-Z0-9]|[-_!?+<>=/*]){0,127}$/)
  .describe('Fungible token asset identifier `<contract id>::<asset name>`');

/** `limit` of a v3 cursor page: 1…max, absent → the default. */
export function V3Limit(def: number, max: number) {
  return z.int().min(1).max(max).default(def).describe(`Number of results per page (default ${def}, at most ${max})`);
}

/** Splits at the first `n` colons: the last part keeps its own colons (asset identifiers hold `::`). */
function splitFirst(s: string, n: number): string[] {
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < n; i++) {
    const c = s.indexOf(':', at);
    out.push(s.slice(at, c));
    at = c + 1;
  }
  out.push(s.slice(at));
  return out;
}

/** Digits as a JS integer, saturated past 2^53 − 1 (no row sits that far: the page is simply empty or full). */
const int = (digits: string) => Math.min(Number(digits), Number.MAX_SAFE_INTEGER);

/** `block_height:microblock_sequence:tx_index`. */
export const TxCursor = z
  .string()
  .regex(/^[0-9]+:[0-9]+:[0-9]+$/)
  .transform((s) => {
    const [h, m, i] = s.split(':');
    return { block_height: int(h), microblock_sequence: int(m), tx_index: int(i) };
  })
  .describe('Cursor for paginating transactions. Format: block_height:microblock_sequence:tx_index');

/** `asset_type:asset_identifier` (1 STX with identifier `stx`, 2 FT, 3 NFT). */
export const TxBalanceChangeCursor = z
  .string()
  .regex(/^[0-9]+:\S+$/)
  .transform((s) => {
    const [t, id] = splitFirst(s, 1);
    return { asset_type: int(t), asset_identifier: id };
  })
  .describe('Cursor for paginating the balance changes of a transaction. Format: `<asset_type>:<asset_identifier>`');

/** `block_height:microblock_sequence:tx_index:asset_type:asset_identifier`. */
export const BalanceChangeCursor = z
  .string()
  .regex(/^[0-9]+:[0-9]+:[0-9]+:[0-9]+:\S+$/)
  .transform((s) => {
    const [h, m, i, t, id] = splitFirst(s, 4);
    return { block_height: int(h), microblock_sequence: int(m), tx_index: int(i), asset_type: int(t), asset_identifier: id };
  })
  .describe(
    'Cursor for paginating balance changes across transactions. ' +
      'Format: `<block_height>:<microblock_sequence>:<tx_index>:<asset_type>:<asset_identifier>`',
  );

/** `balance:asset_identifier`. */
export const FtBalanceCursor = z
  .string()
  .regex(/^\d+:.+$/)
  .transform((s) => {
    const [balance, token] = splitFirst(s, 1);
    return { balance, token };
  })
  .describe('Cursor for paginating FT balances (sorted by balance, descending). Format: balance:asset_identifier');

/** `value:asset_identifier` (value as `0x` hex). */
export const NftBalanceCursor = z
  .string()
  .regex(/^0x[0-9a-fA-F]*:.+$/)
  .transform((s) => {
    const [value, asset] = splitFirst(s, 1);
    return { asset_identifier: asset, value_hex: value.toLowerCase() };
  })
  .describe('Cursor for paginating NFT balances (sorted by asset identifier then value). Format: value:asset_identifier');

/** `receipt_time:tx_id`. */
export const MempoolCursor = z
  .string()
  .regex(/^\d+:(0x)?[a-fA-F0-9]{64}$/)
  .transform((s) => {
    const [t, id] = splitFirst(s, 1);
    return { receipt_time: int(t), tx_id: normalizeHash(id) };
  })
  .describe('Cursor for paginating mempool transactions. Format: receipt_time:tx_id');

// ---- answers -------------------------------------------------------------------------------------------------------

const Nat = z.string().regex(/^\d+$/);
const Signed = z.string().regex(/^-?\d+$/);

/** `{total, limit, cursor: {next, previous, current}, results}`. */
function cursorPage<T extends z.ZodType>(item: T, max: number) {
  return z.object({
    limit: z.int().min(1).max(max),
    total: Count,
    cursor: z.object({ next: z.string().nullable(), previous: z.string().nullable(), current: z.string().nullable() }),
    results: z.array(item),
  });
}

const Sender = z.object({ address: z.string(), nonce: Count });
const Memo = z.object({ hex: z.string(), repr: z.string() });
const TokenTransferPart = { type: z.literal('token_transfer'), token_transfer: z.object({ recipient: z.string(), amount: Nat, memo: Memo.nullable() }) };
const SmartContractPart = {
  type: z.literal('smart_contract'),
  smart_contract: z.object({ clarity_version: z.number().nullable(), contract_id: z.string() }),
};
const ContractCallPart = { type: z.literal('contract_call'), contract_call: z.object({ contract_id: z.string(), function_name: z.string() }) };

const txBase = {
  tx_id: z.string(),
  sender: Sender,
  sponsor: Sender.nullable(),
  fee_rate: Nat,
  block: z.object({ height: Count, hash: z.string(), index_hash: z.string(), time: z.number(), tx_index: Count }),
  bitcoin_block: z.object({ height: z.int(), time: z.number() }),
  status: z.enum(['success', 'abort_by_response', 'abort_by_post_condition', 'problematic_skipped']),
};
export const TransactionSummaryV3 = component(
  'TransactionSummaryV3',
  z
    .union([
      z.object({ ...txBase, ...TokenTransferPart }),
      z.object({ ...txBase, ...SmartContractPart }),
      z.object({ ...txBase, ...ContractCallPart }),
      z.object({ ...txBase, type: z.literal('poison_microblock') }),
      z.object({ ...txBase, type: z.literal('coinbase'), coinbase: z.object({ alt_recipient: z.string().nullable() }) }),
      z.object({
        ...txBase,
        type: z.literal('tenure_change'),
        tenure_change: z.object({
          cause: z.enum([
            'block_found',
            'extended',
            'extended_runtime',
            'extended_read_count',
            'extended_read_length',
            'extended_write_count',
            'extended_write_length',
          ]),
        }),
      }),
    ])
    .describe('A mined transaction in short'),
);

const StxFlow = z.object({
  sent: Nat.describe('micro-STX sent by the principal, the fee it paid included'),
  received: Nat.describe('micro-STX received by the principal'),
  net: Signed.describe('received − sent'),
});

export const PrincipalTransactionSummary = component(
  'PrincipalTransactionSummary',
  z.object({
    transaction: TransactionSummaryV3,
    involvement: z.enum(['sender', 'sponsor', 'affected']).describe('How the principal takes part in the transaction'),
    balance_changes: z.object({ stx: StxFlow }),
    affected_balances: z.object({ stx: z.boolean(), ft: z.boolean(), nft: z.boolean() }),
  }),
);
export const PrincipalTransactionListV3 = component('PrincipalTransactionListV3', cursorPage(PrincipalTransactionSummary, 50));

const balanceChange = {
  asset: z.union([
    z.object({ type: z.literal('stx') }),
    z.object({ type: z.enum(['ft', 'nft']), identifier: z.string().describe('the asset identifier') }),
  ]),
  balance_change: z.object({
    sent: Nat.describe('amount sent by the principal (NFT: tokens)'),
    received: Nat.describe('amount received by the principal (NFT: tokens)'),
    net: Signed,
  }),
};
export const PrincipalTransactionBalanceChange = component('PrincipalTransactionBalanceChange', z.object(balanceChange));
export const PrincipalTransactionBalanceChangeList = component(
  'PrincipalTransactionBalanceChangeList',
  cursorPage(PrincipalTransactionBalanceChange, 50),
);
export const PrincipalBalanceChange = component('PrincipalBalanceChange', z.object({ tx_id: z.string(), ...balanceChange }));
export const PrincipalBalanceChangeList = component('PrincipalBalanceChangeList', cursorPage(PrincipalBalanceChange, 50));

export const PrincipalStxBalanceV3 = component(
  'PrincipalStxBalance',
  z.object({
    balance: Signed.describe('Total micro-STX balance (available plus locked)'),
    available: Signed.describe('Spendable micro-STX balance (balance minus locked)'),
    locked: z
      .object({
        amount: Nat,
        pox_version: z.int().describe('The PoX contract version that created the lock (1: stx_lock events, 2, 3, 4)'),
        lock_tx_id: z.string(),
        stacks_lock_height: Count,
        burn_lock_height: Count,
        burn_unlock_height: Count,
      })
      .nullable(),
    mempool: z
      .object({
        estimated_balance: Signed.describe('available + pending inbound − pending outbound'),
        inbound: Nat,
        outbound: Nat.describe('transfers plus fees'),
      })
      .nullable()
      .describe('null when no pending tx moves STX to or from the principal'),
  }),
);

export const PrincipalFtPosition = component('PrincipalFtPosition', z.object({ asset_identifier: z.string(), balance: Nat }));
export const PrincipalFtPositionList = component('PrincipalFtPositionList', cursorPage(PrincipalFtPosition, 200));
export const PrincipalNftPosition = component(
  'PrincipalNftPosition',
  z.object({ asset_identifier: z.string(), value: z.object({ hex: z.string(), repr: z.string() }) }),
);
export const PrincipalNftPositionList = component('PrincipalNftPositionList', cursorPage(PrincipalNftPosition, 200));

export const PrincipalNonces = component(
  'PrincipalNonces',
  z.object({
    next_nonce: Count.describe('the nonce to use for the next transaction'),
    last_confirmed_nonce: Count.nullable(),
    mempool: z.object({
      last_nonce: Count.nullable(),
      pending_nonces: z.array(Count),
      missing_nonces: z.array(Count),
    }),
  }),
);

const mempoolBase = {
  tx_id: z.string(),
  sender: Sender,
  sponsor: Sender.nullable(),
  fee_rate: Nat,
  receipt_time: Count,
  receipt_block_height: Count,
  status: z.enum([
    'pending',
    'dropped_replace_by_fee',
    'dropped_replace_across_fork',
    'dropped_too_expensive',
    'dropped_stale_garbage_collect',
    'dropped_problematic',
  ]),
};
export const MempoolTransactionSummaryV3 = component(
  'MempoolTransactionSummaryV3',
  z
    .union([
      z.object({ ...mempoolBase, ...TokenTransferPart }),
      z.object({ ...mempoolBase, ...SmartContractPart }),
      z.object({ ...mempoolBase, ...ContractCallPart }),
      z.object({ ...mempoolBase, type: z.enum(['poison_microblock', 'coinbase', 'tenure_change']) }),
    ])
    .describe('A pending transaction in short'),
);
export const PrincipalMempoolTransactionList = component(
  'PrincipalMempoolTransactionList',
  cursorPage(MempoolTransactionSummaryV3, 50),
);
