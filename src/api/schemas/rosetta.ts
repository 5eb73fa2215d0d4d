/**
 * Rosetta 1.4 request and answer schemas, as the reference's JSON schemas (src/rosetta/json-schemas at v8.13.6) state
 * them: request objects refuse unknown properties; a partial block identifier is any object (its `hash` and `index`
 * are read when they have the right type).
 */
import { z } from 'zod';
import { component, ErrorResponse } from './common.js';

export const NetworkIdentifier = component(
  'RosettaNetworkIdentifier',
  z.strictObject({
    blockchain: z.string(),
    network: z.string(),
    sub_network_identifier: z.strictObject({ network: z.string(), metadata: z.looseObject({ producer: z.string() }).optional() }).optional(),
  }),
);

const Metadata = z.record(z.string(), z.unknown());

export const PartialBlockIdentifier = component(
  'RosettaPartialBlockIdentifier',
  z.looseObject({}).describe('`hash` (the block hash, 0x optional) and/or `index` (the height; 0 or below: the chain tip)'),
);

export const TransactionIdentifier = component('RosettaTransactionIdentifier', z.strictObject({ hash: z.string() }));

export const AccountIdentifier = component(
  'RosettaAccountIdentifier',
  z.looseObject({
    address: z.string(),
    sub_account: z.strictObject({ address: z.string(), metadata: Metadata.optional() }).optional(),
    metadata: Metadata.optional(),
  }),
);

export const NetworkListRequest = z.strictObject({ metadata: Metadata.optional() });
export const NetworkRequest = z.strictObject({ network_identifier: NetworkIdentifier, metadata: Metadata.optional() });
export const BlockRequest = z.strictObject({ network_identifier: NetworkIdentifier, block_identifier: PartialBlockIdentifier });
export const BlockTransactionRequest = z.strictObject({
  network_identifier: NetworkIdentifier,
  block_identifier: PartialBlockIdentifier,
  transaction_identifier: TransactionIdentifier,
});
export const MempoolRequest = NetworkRequest;
export const MempoolTransactionRequest = z.strictObject({ network_identifier: NetworkIdentifier, transaction_identifier: TransactionIdentifier });
export const AccountBalanceRequest = z.strictObject({
  network_identifier: NetworkIdentifier,
  account_identifier: AccountIdentifier,
  block_identifier: PartialBlockIdentifier.optional(),
});

// ---- answers -----------------------------------------------------------------------------------------------------

export const RosettaError = component(
  'RosettaError',
  z.object({ code: z.number().int(), message: z.string(), retriable: z.boolean(), details: Metadata.optional() }),
);

/** What a Rosetta route's error answers hold: its error object, or the common error (no database, no node, access). */
export const RosettaErrorResponse = component(
  'RosettaErrorResponse',
  z.union([RosettaError, ErrorResponse]).describe('A Rosetta error object `{code, message, retriable, details?}`, or the common error (no database or node, route not found, access)'),
);

const BlockIdentifier = z.object({ index: z.number().int(), hash: z.string() });
const Currency = z.object({ symbol: z.string(), decimals: z.number().int(), metadata: Metadata.optional() });
const Amount = z.object({ value: z.string(), currency: Currency, metadata: Metadata.optional() });

export const Operation = component(
  'RosettaOperation',
  z.object({
    operation_identifier: z.object({ index: z.number().int(), network_index: z.number().int().optional() }),
    related_operations: z.array(z.object({ index: z.number().int() })).optional(),
    type: z.string(),
    status: z.string(),
    account: z.object({ address: z.string(), sub_account: z.object({ address: z.string() }).optional(), metadata: Metadata.optional() }).optional(),
    amount: Amount.optional(),
    coin_change: z.object({ coin_action: z.enum(['coin_spent', 'coin_created']), coin_identifier: z.object({ identifier: z.string() }) }).optional(),
    metadata: Metadata.optional(),
  }),
);

export const Transaction = component(
  'RosettaTransaction',
  z.object({
    transaction_identifier: z.object({ hash: z.string() }),
    operations: z.array(Operation),
    metadata: z.object({ memo: z.string() }).optional(),
  }),
);

export const NetworkListResponse = component('RosettaNetworkListResponse', z.object({ network_identifiers: z.array(z.object({ blockchain: z.string(), network: z.string() })) }));

export const NetworkOptionsResponse = component(
  'RosettaNetworkOptionsResponse',
  z.object({
    version: z.object({ rosetta_version: z.string(), node_version: z.string(), middleware_version: z.string() }),
    allow: z.object({
      operation_statuses: z.array(z.object({ status: z.string(), successful: z.boolean() })),
      operation_types: z.array(z.string()),
      errors: z.array(RosettaError),
      historical_balance_lookup: z.boolean(),
    }),
  }),
);

export const NetworkStatusResponse = component(
  'RosettaNetworkStatusResponse',
  z.object({
    current_block_identifier: BlockIdentifier,
    current_block_timestamp: z.number().int(),
    genesis_block_identifier: BlockIdentifier,
    peers: z.array(z.object({ peer_id: z.string() })),
    current_burn_block_height: z.number().int(),
    sync_status: z.object({ current_index: z.number().int(), target_index: z.number().int(), synced: z.boolean() }),
  }),
);

export const BlockResponse = component(
  'RosettaBlockResponse',
  z.object({
    block: z.object({
      block_identifier: BlockIdentifier,
      parent_block_identifier: BlockIdentifier,
      timestamp: z.number().int(),
      transactions: z.array(Transaction),
      metadata: z.object({ burn_block_height: z.number().int() }),
    }),
  }),
);

export const MempoolResponse = component('RosettaMempoolResponse', z.object({ transaction_identifiers: z.array(z.object({ hash: z.string() })) }));
export const MempoolTransactionResponse = component('RosettaMempoolTransactionResponse', z.object({ transaction: Transaction }));

export const AccountBalanceResponse = component(
  'RosettaAccountBalanceResponse',
  z.object({
    block_identifier: BlockIdentifier,
    balances: z.array(Amount),
    metadata: z.object({ sequence_number: z.number().int() }),
  }),
);
