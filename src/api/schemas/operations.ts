/**
 * The catalogue of REST operations: parameters (zod), the answer of each status, summary, tags and deprecation.
 * The single source of the OpenAPI document (src/api/openapi.ts). Parameter schemas document what the handlers
 * accept (the handlers keep their own parsing, whose error messages copy the reference's); response schemas describe
 * what they answer, and test/conformance.test.ts checks every answer against the published document.
 */
import { z } from 'zod';
import {
  component,
  ContractId,
  ErrorResponse,
  PRINCIPAL_PATTERN,
  limitParam,
  offsetParam,
  unanchoredParam,
} from './common.js';
import { BlockListResponse, Block, LegacyBlock, LegacyBlockListResponse, StatusResponse } from './blocks.js';
import {
  ContractEventListResponse,
  ContractResponse,
  MempoolListResponse,
  MempoolStatsResponse,
  TxEventListResponse,
  TxLookupResponse,
  TxMultipleResponse,
} from './txs.js';
import { StxBalanceResponse, TxWithTransfersResponse } from './addresses.js';

export type ErrorStatus = 400 | 404 | 503;

export interface Operation {
  method: 'get';
  /** Router pattern, e.g. `/extended/v1/tx/:tx_id` (OpenAPI form: `/extended/v1/tx/{tx_id}`). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  deprecated?: boolean;
  pathParams?: z.ZodObject;
  query?: z.ZodObject;
  /** The 200 answer; its schema must be a registered component (src/api/schemas/common.ts). */
  ok?: { schema: z.ZodType; description: string; contentType?: string };
  /** A non-JSON 200 answer (the YAML document). */
  okText?: { contentType: string; description: string };
  redirect?: { status: 301 | 302; description: string };
  errors: ErrorStatus[];
}

export const TAGS = [
  { name: 'Info', description: 'Service status and this documentation' },
  { name: 'Blocks', description: 'Anchored blocks' },
  { name: 'Transactions', description: 'Mined transactions' },
  { name: 'Mempool', description: 'Pending transactions' },
  { name: 'Events', description: 'Transaction events' },
  { name: 'Smart Contracts', description: 'Deployed contracts and their events' },
  { name: 'Accounts', description: 'Balances and transfers of an address or contract' },
] as const;

// ---- parameter schemas ------------------------------------------------------------------------------------------

const txIdParam = z
  .string()
  .regex(/^(0x)?[a-fA-F0-9]{64}$/)
  .describe('Transaction id; hex in any case, `0x` optional');
const principalParam = z
  .string()
  .regex(new RegExp(PRINCIPAL_PATTERN))
  .describe('A Stacks address (`SP…`, `ST…`) or a contract identifier `<address>.<contract-name>`');
const heightParam = z.int().min(0);
const eventLimit = z.int().min(0).max(100).default(20).describe('Events to embed (0 or absent: 20; more than 100: 400)');
const eventOffset = z.int().min(0).default(0).describe('Index of the first embedded event');
const EVENT_TYPE = z.enum(['smart_contract_log', 'stx_lock', 'stx_asset', 'fungible_token_asset', 'non_fungible_token_asset']);

export const params = {
  heightOrHash: z.object({
    height_or_hash: z
      .union([
        z.literal('latest'),
        heightParam,
        z.string().regex(/^(0x)?[a-fA-F0-9]{64}$/),
      ])
      .describe('`latest`, a block height, or a block hash or index block hash (64 hex digits, `0x` optional)'),
  }),
  v2BlocksQuery: z.object({
    limit: limitParam(20, 30),
    offset: offsetParam({ min: -300, max: 300 }).describe(
      'Blocks to move from the cursor (positive: older, negative: newer; -300…300)',
    ),
    cursor: z
      .string()
      .regex(/^0x[a-fA-F0-9]{64}$/)
      .optional()
      .describe('Index block hash of the page anchor (default: the chain tip); an unknown cursor is a 404'),
  }),
  v1BlocksQuery: z.object({ limit: limitParam(20, 30), offset: offsetParam() }),
  byHeight: z.object({ height: heightParam.describe('Block height') }),
  byBurnHeight: z.object({ burn_block_height: heightParam.describe('Burn (Bitcoin) block height') }),
  blockHash: z.object({
    hash: z.string().describe('Block hash, 0x-prefixed hex (without `0x`: a 302 redirect to the `0x` form)'),
  }),
  txId: z.object({ tx_id: txIdParam.describe('Transaction id (without `0x`: a 302 redirect to the `0x` form)') }),
  txQuery: z.object({
    event_limit: eventLimit,
    event_offset: eventOffset,
    unanchored: unanchoredParam,
    exclude_function_args: z.boolean().default(false).describe('Leave out `contract_call.function_args`'),
  }),
  txMultipleQuery: z.object({
    tx_id: z
      .array(txIdParam)
      .min(1)
      .describe('Transaction ids, repeated (`?tx_id=0x…&tx_id=0x…`) or one comma-separated value; each needs `0x`'),
    event_limit: eventLimit,
    event_offset: eventOffset,
    unanchored: unanchoredParam,
  }),
  mempoolQuery: z.object({
    limit: limitParam(20, 50),
    offset: offsetParam(),
    sender_address: principalParam.optional().describe('Only transactions sent by this principal'),
    recipient_address: principalParam.optional().describe('Only token transfers to this principal'),
    address: principalParam
      .optional()
      .describe('Transactions involving this principal (sender, recipient or contract); not combinable with the others'),
    order_by: z.enum(['age', 'size', 'fee']).default('age').describe('Sort key'),
    order: z.enum(['asc', 'desc']).default('desc').describe('Sort direction'),
    unanchored: unanchoredParam.describe('Leave out transactions already in an unconfirmed microblock'),
  }),
  principal: z.object({ principal: principalParam }),
  addressMempoolQuery: z.object({ limit: limitParam(20, 50), offset: offsetParam(), unanchored: unanchoredParam }),
  txEventsQuery: z.object({
    tx_id: txIdParam.optional().describe('Events of this transaction (exactly one of tx_id or address)'),
    address: principalParam.optional().describe('Events involving this principal (exactly one of tx_id or address)'),
    type: z.array(EVENT_TYPE).optional().describe('Event types to keep, repeated or comma-separated'),
    limit: limitParam(20, 100),
    offset: offsetParam(),
  }),
  contractId: z.object({ contract_id: ContractId.describe('Contract identifier `<address>.<contract-name>`') }),
  contractEventsQuery: z.object({ limit: limitParam(20, 50), offset: offsetParam(), unanchored: unanchoredParam }),
  stxQuery: z.object({
    unanchored: unanchoredParam,
    until_block: z
      .string()
      .optional()
      .describe('Balance as of this block: a height (≥ 1) or a block hash / index block hash; leaves out the pending flows'),
  }),
  withTransfers: z.object({ principal: principalParam, tx_id: txIdParam }),
};

// ---- the catalogue -------------------------------------------------------------------------------------------------

const OLD_BLOCKS = 'Deprecated: use `GET /extended/v2/blocks` (the blocks list endpoint).';

const PushStatusResponse = component(
  'PushStatus',
  z.object({
    socket_connections: z.number().int(),
    rpc_connections: z.number().int(),
    messages_delivered: z.number().int().describe('messages this process received for delivery'),
    last_cursor: z.string().describe('newest message cursor this process delivered'),
    slow_consumer_disconnects: z.number().int().describe('clients disconnected for passing max_buffered_bytes unsent'),
    max_buffered_bytes: z.number().int(),
    connections_refused: z.number().int().describe('connections refused by rate limits or an invalid API key'),
    resumes: z.number().int().describe('reconnections with a cursor'),
    messages_replayed: z.number().int().describe('messages replayed from PostgreSQL to resuming clients'),
    forced_resyncs: z.number().int().describe('times every client was made to resume (Redis subscription interrupted, or a gap in the push channel)'),
    redis_adapter: z.enum(['classic', 'sharded']).nullable(),
  }),
);

export const OPERATIONS: Operation[] = [
  {
    method: 'get',
    path: '/extended',
    operationId: 'get_status',
    summary: 'API status',
    description: 'Server version, status, PoX unlock heights and the chain tip (absent on an empty database).',
    tags: ['Info'],
    ok: { schema: StatusResponse, description: 'Status' },
    errors: [503],
  },
  {
    method: 'get',
    path: '/',
    operationId: 'redirect_root',
    summary: 'Redirects to /extended',
    tags: ['Info'],
    redirect: { status: 301, description: 'Moved to /extended' },
    errors: [],
  },
  {
    method: 'get',
    path: '/extended/v1/status',
    operationId: 'redirect_status',
    summary: 'Redirects to /extended',
    tags: ['Info'],
    redirect: { status: 301, description: 'Moved to /extended' },
    errors: [],
  },
  {
    method: 'get',
    path: '/extended/v1/status/push',
    operationId: 'get_push_status',
    summary: 'Real-time push counters',
    description:
      'Counters of the api process that answers (each process of a deployment has its own): open Socket.IO and ' +
      'JSON-RPC connections, messages delivered, newest cursor, slow-consumer disconnects, refused connections and ' +
      'resumes. Not part of the reference API.',
    tags: ['Info'],
    ok: { schema: PushStatusResponse, description: 'Counters' },
    errors: [503],
  },
  {
    method: 'get',
    path: '/extended/v2/blocks',
    operationId: 'get_blocks',
    summary: 'Recent blocks',
    description: 'Canonical blocks, newest first, paged from a cursor (default: the chain tip).',
    tags: ['Blocks'],
    query: params.v2BlocksQuery,
    ok: { schema: BlockListResponse, description: 'A page of blocks' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v2/blocks/:height_or_hash',
    operationId: 'get_block',
    summary: 'Block by height, hash or `latest`',
    tags: ['Blocks'],
    pathParams: params.heightOrHash,
    ok: { schema: Block, description: 'The block' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/block',
    operationId: 'get_block_list',
    summary: 'Recent blocks (legacy form)',
    description: OLD_BLOCKS,
    tags: ['Blocks'],
    deprecated: true,
    query: params.v1BlocksQuery,
    ok: { schema: LegacyBlockListResponse, description: 'A page of blocks' },
    errors: [400, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/block/by_height/:height',
    operationId: 'get_block_by_height',
    summary: 'Block by height (legacy form)',
    tags: ['Blocks'],
    pathParams: params.byHeight,
    ok: { schema: LegacyBlock, description: 'The block' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/block/by_burn_block_height/:burn_block_height',
    operationId: 'get_block_by_burn_block_height',
    summary: 'Block by burn block height (legacy form)',
    description: OLD_BLOCKS,
    tags: ['Blocks'],
    deprecated: true,
    pathParams: params.byBurnHeight,
    ok: { schema: LegacyBlock, description: 'The block' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/block/:hash',
    operationId: 'get_block_by_hash',
    summary: 'Block by hash (legacy form)',
    tags: ['Blocks'],
    pathParams: params.blockHash,
    ok: { schema: LegacyBlock, description: 'The block' },
    redirect: { status: 302, description: 'The hash lacks `0x`: redirect to the `0x` form' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/tx/mempool',
    operationId: 'get_mempool_transaction_list',
    summary: 'Pending transactions',
    tags: ['Mempool'],
    query: params.mempoolQuery,
    ok: { schema: MempoolListResponse, description: 'A page of pending transactions' },
    errors: [400, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/tx/mempool/stats',
    operationId: 'get_mempool_stats',
    summary: 'Mempool statistics',
    description: 'Counts and p25/p50/p75/p95 of fee rates, ages (in blocks) and sizes of pending transactions, per type.',
    tags: ['Mempool'],
    ok: { schema: MempoolStatsResponse, description: 'Statistics' },
    errors: [503],
  },
  {
    method: 'get',
    path: '/extended/v1/tx/multiple',
    operationId: 'get_tx_list_details',
    summary: 'Several transactions by id',
    description: 'One entry per requested id: `found` and the transaction (mined or mempool). 404 when none is found.',
    tags: ['Transactions'],
    query: params.txMultipleQuery,
    ok: { schema: TxMultipleResponse, description: 'Lookup results keyed by id' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/tx/events',
    operationId: 'get_filtered_events',
    summary: 'Events of a transaction or of a principal',
    tags: ['Events'],
    query: params.txEventsQuery,
    ok: { schema: TxEventListResponse, description: 'A page of events, newest first' },
    errors: [400, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/tx/:tx_id',
    operationId: 'get_transaction_by_id',
    summary: 'Transaction by id',
    description: 'A mined transaction with its events (paged), or a mempool one (pending or dropped).',
    tags: ['Transactions'],
    pathParams: params.txId,
    query: params.txQuery,
    ok: { schema: TxLookupResponse, description: 'The transaction' },
    redirect: { status: 302, description: 'The id lacks `0x`: redirect to the `0x` form (query kept)' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/address/:principal/mempool',
    operationId: 'get_address_mempool_transactions',
    summary: 'Pending transactions of a principal',
    tags: ['Mempool'],
    pathParams: params.principal,
    query: params.addressMempoolQuery,
    ok: { schema: MempoolListResponse, description: 'A page of pending transactions' },
    errors: [400, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/address/:principal/stx',
    operationId: 'get_account_stx_balance',
    summary: 'STX balance of a principal',
    description: 'Balance, totals, lock state and (without until_block) the pending mempool flows.',
    tags: ['Accounts'],
    pathParams: params.principal,
    query: params.stxQuery,
    ok: { schema: StxBalanceResponse, description: 'The balance' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/address/:principal/:tx_id/with_transfers',
    operationId: 'get_account_transaction_with_transfers',
    summary: 'A transaction of a principal with its transfers',
    description: 'Deprecated: use the events of an address transaction instead.',
    tags: ['Accounts'],
    deprecated: true,
    pathParams: params.withTransfers,
    ok: { schema: TxWithTransfersResponse, description: 'The transaction and the STX/FT/NFT transfers involving the principal' },
    errors: [400, 404, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/contract/:contract_id/events',
    operationId: 'get_contract_events_by_id',
    summary: 'Events of a contract',
    description: '`smart_contract_log` events of the contract, newest first.',
    tags: ['Smart Contracts'],
    pathParams: params.contractId,
    query: params.contractEventsQuery,
    ok: { schema: ContractEventListResponse, description: 'A page of events' },
    errors: [400, 503],
  },
  {
    method: 'get',
    path: '/extended/v1/contract/:contract_id',
    operationId: 'get_contract_by_id',
    summary: 'Contract by identifier',
    tags: ['Smart Contracts'],
    pathParams: params.contractId,
    ok: { schema: ContractResponse, description: 'The contract' },
    errors: [404, 503],
  },
  {
    method: 'get',
    path: '/extended/openapi.json',
    operationId: 'get_openapi_json',
    summary: 'This OpenAPI 3.1 document (JSON)',
    tags: ['Info'],
    okText: { contentType: 'application/json', description: 'The OpenAPI document' },
    errors: [],
  },
  {
    method: 'get',
    path: '/extended/openapi.yaml',
    operationId: 'get_openapi_yaml',
    summary: 'This OpenAPI 3.1 document (YAML)',
    tags: ['Info'],
    okText: { contentType: 'application/yaml', description: 'The OpenAPI document' },
    errors: [],
  },
];

/** Router paths deliberately not in the document: the HTML docs page and its static files. */
export const UNDOCUMENTED_ROUTES = ['/docs', '/docs/*', '/dashboard', '/dashboard/*'];

export { ErrorResponse };
